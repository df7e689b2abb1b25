#include "kiln/worklog/file_system.hpp"

#include <sys/vfs.h>

#include <array>
#include <utility>

#include "kiln/error.hpp"

namespace kiln::worklog {

std::optional<std::string> network_file_system_name(std::uint64_t statfs_type) {
  // The f_type magic numbers of linux/magic.h and of the file systems that keep their own.
  static constexpr std::array<std::pair<std::uint64_t, const char*>, 14> network{{
      {0x6969, "NFS"},
      {0x517B, "SMB"},
      {0xFF534D42, "CIFS/SMB"},
      {0xFE534D42, "SMB2"},
      {0x0BD00BD0, "Lustre"},
      {0x47504653, "GPFS (IBM Spectrum Scale)"},
      {0x19830326, "BeeGFS"},
      {0x00C36400, "CephFS"},
      {0x5346414F, "AFS"},
      {0x6B414653, "AFS (kAFS)"},
      {0x01021997, "9P"},
      {0x013111A8, "IBRIX"},
      {0xA501FCF5, "PVFS2/OrangeFS"},
      {0x564C, "NCP (NetWare)"},
  }};
  for (const auto& [magic, name] : network) {
    if (statfs_type == magic) return std::string(name);
  }
  return std::nullopt;
}

std::optional<std::string> network_file_system_of(const std::filesystem::path& path) {
  std::filesystem::path at = path.empty() ? std::filesystem::path(".") : path;
  std::error_code ec;
  // The file itself, or the nearest folder above it that exists: where it will be created.
  while (!std::filesystem::exists(at, ec)) {
    const std::filesystem::path parent = at.has_parent_path() ? at.parent_path() : std::filesystem::path(".");
    if (parent == at) break;
    at = parent;
  }
  struct statfs info {};
  if (::statfs(at.c_str(), &info) != 0) return std::nullopt;  // the open that follows says why
  return network_file_system_name(static_cast<std::uint64_t>(info.f_type));
}

void require_local_file_system(const std::filesystem::path& path) {
  if (auto fs = network_file_system_of(path)) {
    throw Error(path.string() + ": on a network file system (" + *fs +
                "); a worklog is never written there (SQLite's locks and write-ahead log need one machine's "
                "file system): write it to node-local storage such as $TMPDIR and copy the file to shared storage "
                "when the run ends (kiln merge combines such copies)");
  }
}

void require_worklog_file(const std::filesystem::path& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::file_status st = fs::status(path, ec);
  switch (st.type()) {
    case fs::file_type::regular: return;
    case fs::file_type::not_found: throw Error(path.string() + ": no such worklog");
    case fs::file_type::directory: throw Error(path.string() + ": a folder, not a worklog file");
    case fs::file_type::fifo: throw Error(path.string() + ": a FIFO, not a worklog file");
    case fs::file_type::character:
    case fs::file_type::block: throw Error(path.string() + ": a device, not a worklog file");
    case fs::file_type::socket: throw Error(path.string() + ": a socket, not a worklog file");
    default: throw Error(path.string() + ": not a worklog file (" + (ec ? ec.message() : "not a regular file") + ")");
  }
}

}  // namespace kiln::worklog
