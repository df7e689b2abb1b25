#include "source_closure.hpp"

#include <deque>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <system_error>

#include "code_text.hpp"
#include "evaluate.hpp"
#include "kiln/error.hpp"

namespace fs = std::filesystem;

namespace kiln::tuner {
namespace {

struct Include {
  std::string name;
  bool quoted;
};

// The #include directives of a C-family file (comments out, so a commented include is none).
std::vector<Include> includes_of(const fs::path& file) {
  static const std::regex directive(R"(^#\s*include\s*([<"])([^>"]+)[>"])");
  std::vector<Include> found;
  std::istringstream lines(code_text(read_text(file)));
  std::string line;
  std::smatch m;
  while (std::getline(lines, line)) {
    if (std::regex_search(line, m, directive)) found.push_back({m[2].str(), m[1].str() == "\""});
  }
  return found;
}

bool is_file(const fs::path& p) {
  std::error_code ec;
  return fs::is_regular_file(p, ec);
}

// One identity per file however it is reached (a/../b.h, a symbolic link).
fs::path identity(const fs::path& p) {
  std::error_code ec;
  fs::path c = fs::weakly_canonical(p, ec);
  return ec ? fs::absolute(p).lexically_normal() : c;
}

}  // namespace

std::vector<fs::path> source_closure(const std::vector<fs::path>& listed, const std::vector<fs::path>& include_dirs) {
  std::vector<fs::path> out = listed;
  std::set<fs::path> seen;
  for (const auto& f : listed) seen.insert(identity(f));
  std::deque<fs::path> pending(listed.begin(), listed.end());
  while (!pending.empty()) {
    const fs::path file = pending.front();
    pending.pop_front();
    if (!is_c_family_source(file) || !is_file(file)) continue;
    for (const Include& inc : includes_of(file)) {
      std::vector<fs::path> candidates;
      if (inc.quoted) candidates.push_back(file.parent_path() / inc.name);
      for (const auto& dir : include_dirs) candidates.push_back(dir / inc.name);
      for (const auto& c : candidates) {
        if (!is_file(c)) continue;
        if (seen.insert(identity(c)).second) {
          out.push_back(c);
          pending.push_back(c);
        }
        break;  // the compiler takes the first it finds
      }
    }
  }
  return out;
}

namespace {

// A path as Make reads it: spaces and '#' escaped with a backslash, '$' doubled.
std::string make_escaped(const fs::path& p) {
  std::string out;
  for (char c : p.string()) {
    if (c == ' ' || c == '#') out += '\\';
    if (c == '$') out += '$';
    out += c;
  }
  return out;
}

}  // namespace

void write_depfile(const fs::path& depfile, const fs::path& target, const std::vector<fs::path>& files) {
  std::string text = make_escaped(fs::absolute(target)) + ":";
  for (const auto& f : files) text += " \\\n  " + make_escaped(fs::absolute(f));
  text += "\n";
  std::error_code ec;
  if (depfile.has_parent_path()) fs::create_directories(depfile.parent_path(), ec);
  fs::path partial = depfile;
  partial += ".partial";
  {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out << text;
    if (!out.flush()) throw Error("cannot write the dependency file " + partial.string());
  }
  fs::rename(partial, depfile, ec);
  if (ec) {
    fs::remove(partial, ec);
    throw Error("cannot write the dependency file " + depfile.string());
  }
}

}  // namespace kiln::tuner
