// The committed worklogs. The H200 worklog of key version 1, presets/records/h200/worklog.tar.gz: one SQLite file
// (55 MB, 3.5 MB packed), unpacked once per test process into a temporary directory that lives until
// the process ends. Tests open the unpacked file read-only or work on a copy of it.
#pragma once
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

#include "temp_dir.hpp"

namespace kiln_test {

inline const std::filesystem::path& committed_h200_worklog() {
  static const TempDir dir("kiln-h200-worklog");
  static const std::filesystem::path file = [] {
    const std::filesystem::path packed = std::filesystem::path(KILN_SOURCE_DIR) / "presets/records/h200/worklog.tar.gz";
    const std::string command = "tar -xzf '" + packed.string() + "' -C '" + dir.path().string() + "'";
    if (std::system(command.c_str()) != 0) throw std::runtime_error("cannot unpack " + packed.string());
    return dir.path() / "worklog.sqlite";
  }();
  return file;
}

// Unpacks a committed xz-packed worklog (`packed`, relative to the source tree) to `to`.
inline void unpack_xz_worklog(const std::string& packed, const std::filesystem::path& to) {
  const std::filesystem::path from = std::filesystem::path(KILN_SOURCE_DIR) / packed;
  const std::string command = "xz -dc '" + from.string() + "' > '" + to.string() + "'";
  if (std::system(command.c_str()) != 0) throw std::runtime_error("cannot unpack " + from.string());
}

}  // namespace kiln_test
