// Writing outputs without disturbing the build: a file whose content is unchanged keeps its
// modification time (Ninja rebuilds nothing), a changed file appears at once through a rename (a
// reader never sees half a file), and sources of variants no longer in the space are removed --
// only those the previous manifest.json lists, so no file Kiln did not write is ever deleted,
// whatever directory --out names.
#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <system_error>

#include "kiln/gen/emit.hpp"

namespace kiln::gen {
namespace {

namespace fs = std::filesystem;

constexpr const char* kTempSuffix = ".kiln-tmp";

bool has_content(const fs::path& path, const std::string& content) {
  std::error_code ec;
  if (!fs::is_regular_file(path, ec) || fs::file_size(path, ec) != content.size() || ec) return false;
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return in.good() && text.str() == content;
}

[[noreturn]] void fail_write(const fs::path& path, const std::string& why) {
  throw InputError(path.string() + ": cannot write: " + why);
}

fs::path temp_path(const fs::path& path);

void write_atomically(const fs::path& path, const std::string& content) {
  const fs::path temp = temp_path(path);
  {
    std::ofstream out(temp, std::ios::binary | std::ios::trunc);
    if (!out) fail_write(temp, std::strerror(errno));
    out.write(content.data(), static_cast<std::streamsize>(content.size()));
    out.close();
    if (!out) {
      std::error_code ignored;
      fs::remove(temp, ignored);
      fail_write(temp, "write failed");
    }
  }
  std::error_code ec;
  fs::rename(temp, path, ec);
  if (ec) {
    std::error_code ignored;
    fs::remove(temp, ignored);
    fail_write(path, ec.message());
  }
}

// The variant sources the manifest.json already in `out` lists (variants[].source), each a plain
// file name under variants/. A missing, unreadable or foreign manifest lists none: then nothing is
// removed.
std::set<fs::path> previous_sources(const fs::path& out) {
  std::set<fs::path> sources;
  std::error_code ec;
  if (!fs::is_regular_file(out / "manifest.json", ec)) return sources;
  try {
    const JsonFile file = read_json_file(out / "manifest.json");
    const auto& root = file.root;
    if (!root.is_object() || root.value("kiln_manifest", 0) != 1 || !root.contains("variants") ||
        !root["variants"].is_array()) {
      return sources;
    }
    for (const auto& variant : root["variants"]) {
      if (!variant.is_object() || !variant.contains("source") || !variant["source"].is_string()) continue;
      const fs::path source = variant["source"].get<std::string>();
      const fs::path name = source.filename();
      const bool plain = source == fs::path("variants") / name && is_identifier(name.stem().string()) &&
                         model::is_variant_source_extension(name.extension().string());
      if (plain) sources.insert(out / source);
    }
  } catch (const std::exception&) {
    return {};
  }
  return sources;
}

fs::path temp_path(const fs::path& path) { return path.parent_path() / ("." + path.filename().string() + kTempSuffix); }

// Removes `path` if it is a regular file; true when it did.
bool remove_file(const fs::path& path, const char* what) {
  std::error_code ec;
  if (!fs::is_regular_file(fs::symlink_status(path, ec))) return false;
  fs::remove(path, ec);
  if (ec) throw InputError(path.string() + ": cannot remove " + what + ": " + ec.message());
  return true;
}

}  // namespace

void check_output_directory(const fs::path& out) {
  if (out.empty()) throw InputError("the output directory is an empty path");
  std::error_code ec;
  const fs::file_status status = fs::status(out, ec);
  if (fs::exists(status) && !fs::is_directory(status)) {
    throw InputError(out.string() + ": the output directory exists and is not a directory");
  }
  const fs::file_status variants = fs::status(out / "variants", ec);
  if (fs::exists(variants) && !fs::is_directory(variants)) {
    throw InputError((out / "variants").string() + ": exists and is not a directory");
  }
}

WriteReport write_outputs(const fs::path& out, const std::vector<OutputFile>& files) {
  check_output_directory(out);
  const std::set<fs::path> previous = previous_sources(out);
  WriteReport report;
  std::error_code ec;
  fs::create_directories(out / "variants", ec);
  if (ec) fail_write(out / "variants", ec.message());

  std::set<fs::path> expected;
  for (const OutputFile& file : files) {
    const fs::path path = out / file.path;
    expected.insert(path);
    if (has_content(path, file.content)) {
      report.unchanged.push_back(file.path);
      continue;
    }
    write_atomically(path, file.content);
    report.written.push_back(file.path);
  }

  for (const fs::path& path : previous) {
    remove_file(temp_path(path), "a leftover temporary file");
    if (expected.count(path) != 0) continue;
    if (remove_file(path, "a stale variant source")) report.removed.push_back(fs::path("variants") / path.filename());
  }
  return report;
}

}  // namespace kiln::gen
