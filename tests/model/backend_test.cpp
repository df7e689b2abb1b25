// The backends' table (kiln/model/backend.hpp): one row per backend, looked up by name with one
// error for a name it does not have, and in step with what else lists the backends: the build's
// list (cmake/KilnBackends.cmake, passed in as KILN_CMAKE_BACKENDS), the registration macros of
// kiln/variant.hpp and the space schema's names.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "error_message.hpp"
#include "kiln/join.hpp"
#include "kiln/model/backend.hpp"
#include "kiln/model/json_reader.hpp"
#include "kiln_catch.hpp"

namespace fs = std::filesystem;
using kiln::model::Backend;
using kiln::model::backends;
using kiln_test::ContainsSubstring;

namespace {

std::string read_text(const fs::path& file) {
  std::ifstream in(file, std::ios::binary);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<std::string> names() {
  std::vector<std::string> out;
  for (const Backend& b : backends()) out.emplace_back(b.name);
  return out;
}

// The message of the kiln::Error `f` throws, or "" when it throws none.
template <class F>
std::string error_of(F&& f) {
  return kiln_test::message_of<kiln::Error>(std::forward<F>(f));
}

}  // namespace

TEST_CASE("the backends' table: each backend once, with what the tools need of it", "[backend]") {
  REQUIRE_FALSE(backends().empty());
  std::set<std::string_view> seen_names, seen_extensions, seen_macros;
  bool host = false;
  for (const Backend& b : backends()) {
    INFO(b.name);
    CHECK(kiln::model::is_identifier(b.name));
    CHECK(std::all_of(b.name.begin(), b.name.end(), [](char c) { return !(c >= 'A' && c <= 'Z'); }));
    CHECK_FALSE(b.title.empty());
    CHECK(b.source_extension.size() > 1);
    CHECK(b.source_extension.front() == '.');
    CHECK(kiln::model::is_identifier(b.variant_macro));
    CHECK(b.compile_gib > 0);
    CHECK(seen_names.insert(b.name).second);
    CHECK(seen_extensions.insert(b.source_extension).second);
    CHECK(seen_macros.insert(b.variant_macro).second);
    CHECK(kiln::model::is_variant_source_extension(b.source_extension));
    host = host || b.processor == kiln::model::Processor::host;
  }
  // Without a device file the preflight falls back to the backend that runs on this machine's cores.
  CHECK(host);
  CHECK_FALSE(kiln::model::is_variant_source_extension(".hpp"));
  CHECK_FALSE(kiln::model::is_variant_source_extension(""));
}

TEST_CASE("a backend is found by its name, and any other name is one error listing the backends", "[backend]") {
  for (const Backend& b : backends()) {
    CHECK(kiln::model::find_backend(b.name) == &b);
    CHECK(&kiln::model::backend_named(b.name) == &b);
  }
  CHECK(kiln::model::find_backend("hip") == nullptr);
  CHECK(kiln::model::find_backend("CPU") == nullptr);
  const std::string known = "(Kiln's backends: " + kiln::join(names(), ", ") + ")";
  CHECK(error_of([] { kiln::model::backend_named("hip"); }) == "unknown backend \"hip\" " + known);

  const kiln::model::JsonFile file = kiln::model::parse_json_text("dev.json", R"({"backend": "hip", "name": 3})");
  const kiln::model::JsonNode root = kiln::model::JsonNode::root(file);
  CHECK(error_of([&] { kiln::model::backend_of(root["backend"]); }) ==
        "dev.json: /backend: unknown backend \"hip\" " + known);
  CHECK_THAT(error_of([&] { kiln::model::backend_of(root["name"]); }), ContainsSubstring("dev.json: /name: expected a string"));
  const kiln::model::JsonFile good = kiln::model::parse_json_text("dev.json", R"({"backend": "cuda"})");
  CHECK(kiln::model::backend_of(kiln::model::JsonNode::root(good)["backend"]).name == "cuda");
}

TEST_CASE("the build's list of backends is the table's, with the same source extensions", "[backend]") {
  // "cpu.cpp,cuda.cu": each backend of cmake/KilnBackends.cmake with its EXTENSION, in its order.
  std::vector<std::string> cmake_names;
  std::stringstream list(KILN_CMAKE_BACKENDS);
  std::string entry;
  while (std::getline(list, entry, ',')) {
    const std::size_t dot = entry.find('.');
    REQUIRE(dot != std::string::npos);
    const std::string name = entry.substr(0, dot);
    INFO(name);
    cmake_names.push_back(name);
    const Backend* b = kiln::model::find_backend(name);
    REQUIRE(b != nullptr);
    CHECK(b->source_extension == entry.substr(dot));
  }
  CHECK(cmake_names == names());
}

TEST_CASE("each backend's registration macro is defined in kiln/variant.hpp and registers its name", "[backend]") {
  const std::string header = read_text(fs::path(KILN_SOURCE_DIR) / "autotune/include/kiln/variant.hpp");
  for (const Backend& b : backends()) {
    INFO(b.variant_macro);
    const std::size_t start = header.find("#define " + std::string(b.variant_macro) + "(");
    REQUIRE(start != std::string::npos);
    // The macro's body ends at the first line that does not continue it.
    std::size_t end = start;
    do {
      end = header.find('\n', end + 1);
    } while (end != std::string::npos && header[end - 1] == '\\');
    const std::string body = header.substr(start, end - start);
    CHECK_THAT(body, ContainsSubstring("\"" + std::string(b.name) + "\""));
  }
}

TEST_CASE("the space schema names the backends of the table", "[backend]") {
  const auto schema = nlohmann::json::parse(read_text(fs::path(KILN_SOURCE_DIR) / "generator/space.schema.json"));
  CHECK(schema.at("properties").at("backend").at("enum").get<std::vector<std::string>>() == names());
}
