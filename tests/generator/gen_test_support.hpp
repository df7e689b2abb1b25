// Shared helpers of the generator tests: paths of the checked-in spaces and devices, JSON files in
// temporary directories, and running the generate command in-process.
#pragma once
#include <filesystem>
#include <sstream>
#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "error_message.hpp"
#include "kiln/gen/generate.hpp"
#include "kiln_catch.hpp"
#include "temp_dir.hpp"

namespace gen_test {

namespace fs = std::filesystem;
using ordered_json = nlohmann::ordered_json;

// StartsWith has the same name and meaning in Catch2 v2 and v3.
inline auto StartsWith(const std::string& prefix) { return Catch::Matchers::StartsWith(prefix); }

inline fs::path source_dir() { return fs::path(KILN_SOURCE_DIR); }
inline fs::path good_space(const std::string& file) { return source_dir() / "tests/generator/good" / file; }
inline fs::path bad_dir() { return source_dir() / "tests/generator/bad"; }
inline fs::path device(const std::string& name) { return source_dir() / "presets/devices" / (name + ".json"); }

inline ordered_json read_json(const fs::path& path) { return ordered_json::parse(kiln_test::read_file(path)); }

inline fs::path write_json(const fs::path& path, const ordered_json& value) {
  kiln_test::write_file(path, value.dump(2) + "\n");
  return path;
}

struct CommandResult {
  int rc = -1;
  std::string out;
  std::string err;
};

inline CommandResult run_generate(const fs::path& space, const fs::path& target, const fs::path& out) {
  std::ostringstream out_log;
  std::ostringstream err;
  CommandResult r;
  r.rc = kiln::gen::generate_command(space, target, out, out_log, err);
  r.out = out_log.str();
  r.err = err.str();
  return r;
}

// The message of the InputError `f` throws, or "" when it throws none.
template <class F>
std::string generator_error(F&& f) {
  return kiln_test::message_of<kiln::gen::InputError>(std::forward<F>(f));
}

inline bool directory_is_empty(const fs::path& dir) { return fs::is_directory(dir) && fs::is_empty(dir); }

}  // namespace gen_test
