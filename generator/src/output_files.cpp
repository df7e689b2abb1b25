// Writing outputs without disturbing the build: a file whose content is unchanged keeps its
// modification time (Ninja rebuilds nothing), a changed file appears at once through a rename (a
// reader never sees half a file), and sources of variants no longer in the space are removed.
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
  throw GeneratorError(path.string() + ": cannot write: " + why);
}

void write_atomically(const fs::path& path, const std::string& content) {
  const fs::path temp = path.parent_path() / ("." + path.filename().string() + kTempSuffix);
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

// What may be removed from out/variants: variant sources and leftovers of interrupted writes.
// Anything else there is not the generator's to delete.
bool is_generated_name(const fs::path& name) {
  const std::string text = name.string();
  const std::string suffix = kTempSuffix;
  const bool temp = text.size() > suffix.size() && text.compare(text.size() - suffix.size(), suffix.size(), suffix) == 0;
  return temp || name.extension() == ".cpp" || name.extension() == ".cu";
}

}  // namespace

WriteReport write_outputs(const fs::path& out, const std::vector<OutputFile>& files) {
  WriteReport report;
  std::error_code ec;
  fs::create_directories(out / "variants", ec);
  if (ec) fail_write(out / "variants", ec.message());

  std::set<fs::path> expected;
  for (const OutputFile& file : files) {
    const fs::path path = out / file.path;
    expected.insert(path.lexically_normal());
    if (has_content(path, file.content)) {
      report.unchanged.push_back(file.path);
      continue;
    }
    write_atomically(path, file.content);
    report.written.push_back(file.path);
  }

  for (const fs::directory_entry& entry : fs::directory_iterator(out / "variants")) {
    const fs::path path = entry.path().lexically_normal();
    if (!entry.is_regular_file() || expected.count(path) != 0 || !is_generated_name(path.filename())) continue;
    fs::remove(path, ec);
    if (ec) throw GeneratorError(path.string() + ": cannot remove a stale variant source: " + ec.message());
    report.removed.push_back(fs::path("variants") / path.filename());
  }
  std::sort(report.removed.begin(), report.removed.end());  // directory order is arbitrary
  return report;
}

}  // namespace kiln::gen
