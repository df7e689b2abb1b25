// Loading spaces and device files. The corpus in bad/ holds one space per error; its sidecar
// <case>.expect gives, on line 1, the place (a JSON pointer such as /constraints/0, a `:line:col`
// for malformed JSON, or `-` for an error about the whole space) and, on line 2, text the message
// must contain.
#include <algorithm>
#include <fstream>
#include <vector>

#include "gen_test_support.hpp"
#include "kiln/gen/space.hpp"
#include "kiln/hash.hpp"
#include "kiln/model/manifest.hpp"
#include "kiln_catch.hpp"

using namespace gen_test;
using kiln::gen::load_space;
using kiln::gen::load_device;
using kiln_test::ContainsSubstring;

namespace {

struct Expectation {
  std::string place;
  std::string text;
};

Expectation read_expectation(const fs::path& path) {
  std::ifstream in(path);
  Expectation e;
  std::getline(in, e.place);
  std::getline(in, e.text);
  return e;
}

std::string expected_prefix(const fs::path& space, const std::string& place) {
  if (place == "-") return space.string() + ": ";
  if (!place.empty() && place[0] == ':') return space.string() + place + ": ";
  return space.string() + ": " + place + ": ";
}

std::vector<fs::path> corpus() {
  std::vector<fs::path> spaces;
  for (const auto& entry : fs::directory_iterator(bad_dir())) {
    const std::string name = entry.path().filename().string();
    if (name.size() > 11 && name.substr(name.size() - 11) == ".space.json") spaces.push_back(entry.path());
  }
  std::sort(spaces.begin(), spaces.end());
  return spaces;
}

fs::path expect_file(const fs::path& space) {
  std::string name = space.filename().string();
  return space.parent_path() / (name.substr(0, name.size() - 11) + ".expect");
}

}  // namespace

TEST_CASE("every bad space fails with one message naming the file, the place and the problem", "[space]") {
  const std::vector<fs::path> spaces = corpus();
  REQUIRE(spaces.size() >= 60);
  for (const fs::path& space : spaces) {
    INFO("case " << space.filename().string());
    REQUIRE(fs::exists(expect_file(space)));
    const Expectation expect = read_expectation(expect_file(space));
    REQUIRE(!expect.place.empty());
    REQUIRE(!expect.text.empty());

    kiln_test::TempDir tmp("kiln-gen-bad");
    const fs::path out = tmp / "out";
    fs::create_directories(out);
    const CommandResult r = run_generate(space, device("h100"), out);

    CHECK(r.rc == 1);
    CHECK(r.out.empty());
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK_THAT(r.err, StartsWith(expected_prefix(space, expect.place)));
    CHECK_THAT(r.err, ContainsSubstring(expect.text));
    CHECK(directory_is_empty(out));
  }
}

TEST_CASE("malformed JSON is reported at its line and column", "[space]") {
  kiln_test::TempDir tmp("kiln-gen-json");
  const fs::path space = tmp / "broken.space.json";
  // The place is the last byte the parser read: here the end of line 3, after "tru".
  kiln_test::write_file(space, "{\n  \"kiln_space\": 1,\n  \"kernel\": tru\n}\n");
  const std::string msg = generator_error([&] { load_space(space, load_device(device("h100"))); });
  CHECK_THAT(msg, StartsWith(space.string() + ":3:16: malformed JSON: "));
  CHECK_THAT(msg, ContainsSubstring("invalid literal"));

  kiln_test::write_file(space, "");
  CHECK_THAT(generator_error([&] { load_space(space, load_device(device("h100"))); }),
             StartsWith(space.string() + ":1:1: malformed JSON: "));
}

TEST_CASE("a missing space file is reported by name", "[space]") {
  kiln_test::TempDir tmp("kiln-gen-missing");
  const fs::path space = tmp / "absent.space.json";
  CHECK_THAT(generator_error([&] { load_space(space, load_device(device("h100"))); }),
             StartsWith(space.string() + ": cannot read the file"));
}

TEST_CASE("the README's space loads with defaults filled in", "[space]") {
  const auto target = load_device(device("h100"));
  const auto space = load_space(good_space("softmax_cuda.space.json"), target);
  CHECK(space.kernel == "softmax_cuda");
  CHECK(space.backend == "cuda");
  CHECK(space.harness.include == "softmax_cuda.cuh");
  CHECK(space.harness.workload == "kiln::softmax::CudaWorkload");
  REQUIRE(space.parameters.size() == 3);
  CHECK(space.parameters[0].name == "THREADS");
  CHECK(space.parameters[0].default_index == 1);
  CHECK(space.parameters[1].default_index == 2);
  CHECK(space.parameters[2].name == "CACHE");
  CHECK(space.parameters[2].default_index == 0);  // no default: the first value
  CHECK_FALSE(space.parameters[2].symbolic());
  CHECK_FALSE(space.parameters[2].wide());
  REQUIRE(space.derived.size() == 1);
  CHECK(space.derived[0].pointer == "/derived/ELEMS_PER_PASS");
  REQUIRE(space.constraints.size() == 2);
  CHECK(space.constraints[0].pointer == "/constraints/0");
  CHECK(space.constraints[0].why.empty());
  CHECK(space.constraints[0].expr_pointer == "/constraints/0");
  CHECK(space.constraints[1].pointer == "/constraints/1");
  CHECK(space.constraints[1].expr_pointer == "/constraints/1/expr");
  CHECK(space.constraints[1].why == "at most 32 registers of cached row");
  REQUIRE(space.dims.size() == 3);
  CHECK(space.dims[2].symbolic);
  CHECK(space.dims[2].domain == std::vector<std::string>{"fp32", "bf16"});
  CHECK(space.work.size() == 3);
  CHECK(space.problems.size() == 3);
  CHECK(space.checks.size() == 1);
  CHECK(space.problem_buckets == std::vector<std::size_t>{0, 1, 2});
  CHECK(space.tolerance.at("bf16") == 1e-2);
  CHECK(space.tolerance.at("fp32") == 1e-5);
  CHECK(space.tolerance.at("fp16") == 2e-3);
  CHECK(space.tuning.max_variants == 256);
  CHECK(space.tuning.timeout_s == 60);
  CHECK(space.hash == kiln::fnv1a64_hex(kiln_test::read_file(good_space("softmax_cuda.space.json"))));
}

TEST_CASE("identifier and wide integer parameters", "[space]") {
  const auto space = load_space(good_space("toy_cpu.space.json"), load_device(device("cpu")));
  REQUIRE(space.parameters.size() == 3);
  CHECK(space.parameters[0].symbolic());
  CHECK(space.parameters[0].default_index == 1);
  CHECK(std::get<std::int64_t>(space.parameters[1].values[0]) == -3);
  CHECK_FALSE(space.parameters[1].wide());
  CHECK(space.parameters[2].wide());
  CHECK(space.tuning.max_variants == 256);
  CHECK(space.tuning.timeout_s == 120);
  CHECK(space.description == "A scaled copy, small enough that a test compiles one of its variants.");
}

TEST_CASE("a constraint may use a limit only the target declares", "[space]") {
  kiln_test::TempDir tmp("kiln-gen-limits");
  ordered_json space = read_json(good_space("softmax_cuda.space.json"));
  space["constraints"][0] = "THREADS * 4 <= regs_per_sm";
  const fs::path path = write_json(tmp / "s.space.json", space);
  CHECK_NOTHROW(load_space(path, load_device(device("h100"))));

  ordered_json cpu = read_json(device("cpu"));
  cpu["backend"] = "cuda";  // same backend, but without the CUDA limits
  const fs::path device_path = write_json(tmp / "cudaless.json", cpu);
  CHECK_THAT(generator_error([&] { load_space(path, load_device(device_path)); }),
             StartsWith(path.string() + ": /constraints/0: unknown name 'regs_per_sm'"));
}

TEST_CASE("device files: name, backend and integer limits are checked", "[space]") {
  kiln_test::TempDir tmp("kiln-gen-device");
  const fs::path path = tmp / "dev.json";

  ordered_json dev = read_json(device("h100"));
  dev["limits"]["warp_size"] = 32.5;
  write_json(path, dev);
  CHECK_THAT(generator_error([&] { load_device(path); }),
             StartsWith(path.string() + ": /limits/warp_size: expected an integer, got 32.5"));

  dev = read_json(device("h100"));
  dev.erase("backend");
  write_json(path, dev);
  CHECK(generator_error([&] { load_device(path); }) == path.string() + ": /backend: required key is missing");

  dev = read_json(device("h100"));
  dev["backend"] = "rocm";
  write_json(path, dev);
  CHECK_THAT(generator_error([&] { load_device(path); }),
             ContainsSubstring(": /backend: unknown backend \"rocm\" (Kiln's backends: "));

  dev = read_json(device("h100"));
  dev["name"] = "h100\";rm";
  write_json(path, dev);
  CHECK_THAT(generator_error([&] { load_device(path); }), ContainsSubstring(": /name: a device name uses"));

  dev = read_json(device("h100"));
  dev["limits"] = ordered_json::array();
  write_json(path, dev);
  CHECK_THAT(generator_error([&] { load_device(path); }), ContainsSubstring(": /limits: expected an object"));

  kiln_test::write_file(path, "{\"name\": \"x\",\n \"backend\": }");
  CHECK_THAT(generator_error([&] { load_device(path); }), StartsWith(path.string() + ":2:13: malformed JSON"));
}

TEST_CASE("the generate command reports a bad device file and writes nothing", "[space]") {
  kiln_test::TempDir tmp("kiln-gen-device-cmd");
  ordered_json dev = read_json(device("h100"));
  dev["limits"]["sm_count"] = "132";
  const fs::path path = write_json(tmp / "dev.json", dev);
  const CommandResult r = run_generate(good_space("softmax_cuda.space.json"), path, tmp / "out");
  CHECK(r.rc == 1);
  CHECK(r.err == path.string() + ": /limits/sm_count: expected an integer, got \"132\"\n");
  CHECK_FALSE(fs::exists(tmp / "out"));
}

TEST_CASE("every shipped device file loads", "[space]") {
  for (const char* name : {"cpu", "h100", "h200", "l4"}) {
    INFO(name);
    const auto target = load_device(device(name));
    CHECK(target.name == name);
    CHECK_FALSE(target.limits.empty());
  }
}

TEST_CASE("the JSON Schema of space files names what the generator reads", "[space]") {
  const ordered_json schema = read_json(source_dir() / "generator/space.schema.json");
  REQUIRE(schema.at("type") == "object");
  kiln_test::TempDir tmp("kiln-gen-schema");
  const ordered_json toy = read_json(good_space("toy_cpu.space.json"));

  // A space that names the schema loads as before.
  ordered_json with_schema = toy;
  with_schema["$schema"] = "../../../generator/space.schema.json";
  const fs::path named = write_json(tmp / "named.space.json", with_schema);
  CHECK(load_space(named, load_device(device("cpu"))).kernel == "toy_cpu");

  // Every top-level key the schema lists is one the generator knows...
  for (const auto& [key, property] : schema.at("properties").items()) {
    INFO(key);
    ordered_json space = toy;
    space[key] = nullptr;
    const fs::path path = write_json(tmp / "key.space.json", space);
    const std::string error = generator_error([&] { load_space(path, load_device(device("cpu"))); });
    CHECK(error.find("unknown key") == std::string::npos);
  }
  // ...and every key it requires, the generator requires.
  for (const auto& key : schema.at("required")) {
    INFO(key.get<std::string>());
    ordered_json space = toy;
    space.erase(key.get<std::string>());
    const fs::path path = write_json(tmp / "required.space.json", space);
    CHECK_THAT(generator_error([&] { load_space(path, load_device(device("cpu"))); }),
               kiln_test::ContainsSubstring("/" + key.get<std::string>() + ": required key is missing"));
  }
}

TEST_CASE("a space's own search and budget reach the manifest as written, and read back", "[space]") {
  kiln_test::TempDir tmp("kiln-gen-search");
  ordered_json space = read_json(good_space("toy_cpu.space.json"));
  space["tuning"] = {{"search", "forest"}, {"budget", 0.15}};
  const fs::path path = write_json(tmp / "search.space.json", space);
  REQUIRE(run_generate(path, device("cpu"), tmp / "out").rc == 0);
  const ordered_json m = read_json(tmp / "out/manifest.json");
  CHECK(m.at("tuning").at("search") == "forest");
  CHECK(m.at("tuning").at("budget") == 0.15);
  const kiln::model::Manifest read = kiln::model::load_manifest(tmp / "out/manifest.json");
  CHECK(read.tuning.search == "forest");
  CHECK(read.tuning.budget == "0.15");

  space["tuning"] = {{"search", "random"}, {"budget", 40}};
  write_json(path, space);
  REQUIRE(run_generate(path, device("cpu"), tmp / "count").rc == 0);
  CHECK(kiln::model::load_manifest(tmp / "count/manifest.json").tuning.budget == "40");

  // Without them the manifest's tuning is as before: no search, no budget.
  REQUIRE(run_generate(good_space("toy_cpu.space.json"), device("cpu"), tmp / "plain").rc == 0);
  const ordered_json plain = read_json(tmp / "plain/manifest.json");
  CHECK_FALSE(plain.at("tuning").contains("search"));
  CHECK_FALSE(plain.at("tuning").contains("budget"));

  // A manifest naming a search the tuner does not have is refused with the field.
  ordered_json hostile = m;
  hostile["tuning"]["search"] = "bayes";
  write_json(tmp / "out/manifest.json", hostile);
  CHECK_THAT(generator_error([&] { kiln::model::load_manifest(tmp / "out/manifest.json"); }),
             kiln_test::ContainsSubstring("/tuning/search: unknown search strategy 'bayes'"));
  hostile["tuning"]["search"] = "forest";
  hostile["tuning"]["budget"] = 2.5;
  write_json(tmp / "out/manifest.json", hostile);
  CHECK_THAT(generator_error([&] { kiln::model::load_manifest(tmp / "out/manifest.json"); }),
             kiln_test::ContainsSubstring("/tuning/budget: expected a count of variants or a fraction"));

  // The search's other options, as written and read back; a manifest's unknown or bad one refused.
  space["tuning"] = {{"search", "forest"}, {"budget", 0.25}, {"search_options", {{"batch", 8}, {"initial", 5}}}};
  write_json(path, space);
  REQUIRE(run_generate(path, device("cpu"), tmp / "options").rc == 0);
  const ordered_json with = read_json(tmp / "options/manifest.json");
  CHECK(with.at("tuning").at("search_options") == ordered_json({{"batch", 8}, {"initial", 5}}));
  CHECK(kiln::model::load_manifest(tmp / "options/manifest.json").tuning.search_options ==
        std::vector<std::pair<std::string, std::string>>{{"batch", "8"}, {"initial", "5"}});
  CHECK_FALSE(plain.at("tuning").contains("search_options"));
  hostile = with;
  hostile["tuning"]["search_options"]["population"] = 4;
  write_json(tmp / "options/manifest.json", hostile);
  CHECK_THAT(generator_error([&] { kiln::model::load_manifest(tmp / "options/manifest.json"); }),
             kiln_test::ContainsSubstring("/tuning/search_options/population: search 'forest' has no option 'population'"));
  hostile = with;
  hostile["tuning"]["search_options"]["batch"] = -1;
  write_json(tmp / "options/manifest.json", hostile);
  CHECK_THAT(generator_error([&] { kiln::model::load_manifest(tmp / "options/manifest.json"); }),
             kiln_test::ContainsSubstring("/tuning/search_options/batch: expected a positive number, got -1"));
}

TEST_CASE("a domain's features and alternating dims reach the manifest, and a hostile manifest's are refused",
          "[space]") {
  kiln_test::TempDir tmp("kiln-gen-features");
  REQUIRE(run_generate(good_space("domain_alternate_cpu.space.json"), device("cpu"), tmp / "out").rc == 0);
  const ordered_json m = read_json(tmp / "out/manifest.json");
  CHECK(m.at("problem").at("features") == ordered_json({{"cells", "rows * cols"}}));
  CHECK(m.at("tuning").at("alternate") == ordered_json({"layout", "mask"}));
  const kiln::model::Manifest read = kiln::model::load_manifest(tmp / "out/manifest.json");
  REQUIRE(read.features.size() == 1);
  CHECK(read.features[0].name == "cells");
  CHECK(read.tuning.alternate == std::vector<std::string>{"layout", "mask"});
  // Without them (the plain domain space) the manifest has neither key.
  REQUIRE(run_generate(good_space("domain_cpu.space.json"), device("cpu"), tmp / "plain").rc == 0);
  const ordered_json plain = read_json(tmp / "plain/manifest.json");
  CHECK_FALSE(plain.at("problem").contains("features"));
  CHECK_FALSE(plain.at("tuning").contains("alternate"));

  const std::string file = (tmp / "out/manifest.json").string();
  auto refused = [&](const ordered_json& hostile) {
    write_json(tmp / "out/manifest.json", hostile);
    return generator_error([&] { kiln::model::load_manifest(tmp / "out/manifest.json"); });
  };
  ordered_json hostile = m;
  hostile["problem"]["features"] = ordered_json::array({"rows"});
  std::string error = refused(hostile);
  CHECK_THAT(error, StartsWith(file + ": "));
  CHECK_THAT(error, kiln_test::ContainsSubstring("/problem/features: expected an object"));
  hostile = m;
  hostile["problem"]["features"] = {{"rows", "cols * 2"}};
  CHECK_THAT(refused(hostile), kiln_test::ContainsSubstring("/problem/features/rows: also a dim"));
  hostile = m;
  hostile["problem"]["features"] = {{"cells", "rows * width"}};
  CHECK_THAT(refused(hostile), kiln_test::ContainsSubstring("/problem/features/cells: unknown name 'width'"));
  hostile = m;
  hostile["problem"]["features"] = {{"cells", "layout"}};  // a symbol is no integer
  CHECK_THAT(refused(hostile), kiln_test::ContainsSubstring("/problem/features/cells: 'layout' is symbolic"));
  hostile = m;
  hostile["problem"]["features"] = {{"cells", "layout == 'diag' ? rows : cols"}};
  CHECK_THAT(refused(hostile), kiln_test::ContainsSubstring("/problem/features/cells: 'diag' is not a value of 'layout'"));
  hostile = m;
  hostile["problem"]["work"]["bytes"] = "rows * depth";
  CHECK_THAT(refused(hostile), kiln_test::ContainsSubstring(": /problem/work/bytes: unknown name 'depth'"));
  hostile = m;
  hostile["problem"]["domain_constraints"][1] = "layout <= 2";
  CHECK_THAT(refused(hostile), kiln_test::ContainsSubstring(": /problem/domain_constraints/1: 'layout' is symbolic"));
  // A feature may read a symbolic dim (a row's bytes depend on its dtype); it is still an integer.
  ordered_json symbolic = m;
  symbolic["problem"]["features"] = {{"cells", "layout == 'rm' ? rows : 2 * cols"}};
  write_json(tmp / "out/manifest.json", symbolic);
  const kiln::model::Manifest by_layout = kiln::model::load_manifest(tmp / "out/manifest.json");
  kiln::Problem p;
  p.set("rows", std::int64_t{3});
  p.set("cols", std::int64_t{5});
  p.set("dtype", std::string("fp32"));
  p.set("layout", std::string("rm"));
  p.set("mask", std::string("none"));
  CHECK(by_layout.with_features(p).i("cells") == 3);
  p.set("layout", std::string("cm"));
  CHECK(by_layout.with_features(p).i("cells") == 10);
  hostile = m;
  hostile["tuning"]["alternate"] = {"rows"};
  CHECK_THAT(refused(hostile), kiln_test::ContainsSubstring("/tuning/alternate: names \"rows\", not a symbolic dim"));
  hostile = m;
  hostile["tuning"]["search"] = "bayes";
  error = refused(hostile);
  CHECK_THAT(error, StartsWith(file + ": /tuning/search: unknown search strategy 'bayes'"));
}

TEST_CASE("a hostile manifest's reach is refused with the file and the place", "[space]") {
  kiln_test::TempDir tmp("kiln-gen-reach-hostile");
  REQUIRE(run_generate(good_space("domain_reach_cpu.space.json"), device("cpu"), tmp / "out").rc == 0);
  const ordered_json m = read_json(tmp / "out/manifest.json");
  const std::string file = (tmp / "out/manifest.json").string();
  auto refused = [&](const ordered_json& hostile) {
    write_json(tmp / "out/manifest.json", hostile);
    return generator_error([&] { kiln::model::load_manifest(tmp / "out/manifest.json"); });
  };
  ordered_json hostile = m;
  hostile["tuning"]["reach"] = {{"dtype", "VEC"}};
  std::string error = refused(hostile);
  CHECK_THAT(error, StartsWith(file + ": "));
  CHECK_THAT(error, kiln_test::ContainsSubstring("/tuning/reach/dtype: not an int dim"));
  hostile = m;
  hostile["tuning"]["reach"] = ordered_json::object();
  CHECK_THAT(refused(hostile), kiln_test::ContainsSubstring("/tuning/reach: expected an object of int dims"));
  hostile = m;
  hostile["tuning"]["reach"] = {{"cols", "VEC *"}};
  CHECK_THAT(refused(hostile), StartsWith(file + ": "));
  hostile = m;
  hostile["variants"][0]["reach"]["cols"] = 0;
  CHECK_THAT(refused(hostile), kiln_test::ContainsSubstring("/variants/0/reach/cols: expected a whole number >= 1, got 0"));
  hostile = m;
  hostile["variants"][1]["reach"]["cols"] = "64";
  CHECK_THAT(refused(hostile), kiln_test::ContainsSubstring("/reach/cols: expected a whole number >= 1"));
  hostile = m;
  hostile["variants"][2].erase("reach");
  CHECK_THAT(refused(hostile), kiln_test::ContainsSubstring("its reach does not name the dims of tuning.reach"));
  hostile = m;
  hostile["variants"][0]["reach"]["rows"] = 4;
  CHECK_THAT(refused(hostile), kiln_test::ContainsSubstring("its reach does not name the dims of tuning.reach"));
}
