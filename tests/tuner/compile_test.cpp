// Reusing a template's captured command lines for each variant (autotune/tuner/compile.hpp).
#include <chrono>
#include <fstream>
#include <optional>
#include <thread>

#include "compile.hpp"
#include "kiln/error.hpp"
#include "kiln_catch.hpp"
#include "process.hpp"
#include "temp_dir.hpp"
#include "tuner_fixture.hpp"

using namespace kiln::tuner;
using kiln_test::ContainsSubstring;

TEST_CASE("response files are split as a shell splits words") {
  const auto words = split_response_file("a 'b c' \"d\\\"e\" f\\ g\n  -DX=\"1 2\"\t@z ''");
  REQUIRE(words.size() == 7);
  CHECK(words[0] == "a");
  CHECK(words[1] == "b c");
  CHECK(words[2] == "d\"e");
  CHECK(words[3] == "f g");
  CHECK(words[4] == "-DX=1 2");
  CHECK(words[5] == "@z");
  CHECK(words[6].empty());
}

TEST_CASE("an @file argument is replaced by its words, other arguments stay") {
  kiln_test::TempDir dir;
  {
    std::ofstream(dir / "objects.rsp") << "one.o 'two words.o'\n";
  }
  const auto argv = expand_response_files({"c++", "@objects.rsp", "@missing.rsp", "-o", "x"}, dir.path());
  CHECK(argv == std::vector<std::string>{"c++", "one.o", "two words.o", "@missing.rsp", "-o", "x"});
}

TEST_CASE("a variant's commands are the template's with its source, object and executable") {
  CapturedCommand compile{"/b", {"ccache", "/usr/bin/c++", "-I/src/k", "-O3", "-MD", "-MT", "CMakeFiles/t.dir/kiln/k/template.cpp.o",
                                 "-MF", "CMakeFiles/t.dir/kiln/k/template.cpp.o.d", "-o",
                                 "CMakeFiles/t.dir/kiln/k/template.cpp.o", "-c", "/b/kiln/k/template.cpp"}};
  CapturedCommand link{"/b", {"/usr/bin/c++", "-O3", "CMakeFiles/t.dir/kiln/k/template.cpp.o", "-o",
                              "kiln/k/template/kiln_k_template", "libharness.a", "-lgomp"}};
  const VariantCommands v = variant_commands(compile, link, "/b/kiln/k/template.cpp", "/b/kiln/k/generated/variants/k__A1.cpp",
                                             "/b/kiln/k/objects/k__A1.o", "/b/kiln/k/bin/k__A1");
  CHECK(v.compile.cwd == "/b");
  CHECK(v.compile.argv == std::vector<std::string>{"ccache", "/usr/bin/c++", "-I/src/k", "-O3", "-MD", "-MT",
                                                   "/b/kiln/k/objects/k__A1.o", "-MF", "/b/kiln/k/objects/k__A1.o.d",
                                                   "-o", "/b/kiln/k/objects/k__A1.o", "-c",
                                                   "/b/kiln/k/generated/variants/k__A1.cpp"});
  CHECK(v.link.argv == std::vector<std::string>{"/usr/bin/c++", "-O3", "/b/kiln/k/objects/k__A1.o", "-o",
                                                "/b/kiln/k/bin/k__A1", "libharness.a", "-lgomp"});

  // A template source given relative to the build directory is found too.
  CapturedCommand relative = compile;
  relative.argv.back() = "kiln/k/template.cpp";
  CHECK(variant_commands(relative, link, "/b/kiln/k/template.cpp", "/v.cpp", "/o.o", "/e").compile.argv.back() == "/v.cpp");
}

TEST_CASE("captured commands that cannot be reused are refused with the reason") {
  CapturedCommand compile{"/b", {"c++", "-c", "/b/t.cpp", "-o", "t.o"}};
  CapturedCommand link{"/b", {"c++", "t.o", "-o", "t"}};
  CHECK_THROWS_WITH(variant_commands(compile, link, "/b/other.cpp", "/v.cpp", "/o.o", "/e"),
                    ContainsSubstring("does not compile /b/other.cpp"));
  CapturedCommand no_output{"/b", {"c++", "-c", "/b/t.cpp"}};
  CHECK_THROWS_WITH(variant_commands(no_output, link, "/b/t.cpp", "/v.cpp", "/o.o", "/e"),
                    ContainsSubstring("has no `-o <output>`"));
  CapturedCommand other_link{"/b", {"c++", "u.o", "-o", "t"}};
  CHECK_THROWS_WITH(variant_commands(compile, other_link, "/b/t.cpp", "/v.cpp", "/o.o", "/e"),
                    ContainsSubstring("does not link the template's object t.o"));
}

TEST_CASE("a captured command file round-trips, and a broken one names itself") {
  kiln_test::TempDir dir;
  save_captured_command(dir / "c.json", {"/b", {"nvcc", "-x", "cu", "a b"}});
  const CapturedCommand c = load_captured_command(dir / "c.json");
  CHECK(c.cwd == "/b");
  CHECK(c.argv == std::vector<std::string>{"nvcc", "-x", "cu", "a b"});
  {
    std::ofstream(dir / "bad.json") << "{\"cwd\": 3}";
  }
  CHECK_THROWS_WITH(load_captured_command(dir / "bad.json"), ContainsSubstring("bad.json: not a captured command"));
}

TEST_CASE("a link input newer than the variant's build makes it stale, options and the output do not") {
  kiln_test::TempDir dir("kiln-compile");
  const auto object = dir / "v.o";
  const auto library = dir / "libkiln_harness_cpu.a";
  const auto executable = dir / "v";
  for (const auto& f : {object, library, executable}) std::ofstream(f) << "x";
  const auto old_time = std::filesystem::file_time_type::clock::now() - std::chrono::hours(2);
  for (const auto& f : {object, library, executable}) std::filesystem::last_write_time(f, old_time);
  const auto built = std::filesystem::file_time_type::clock::now() - std::chrono::hours(1);
  // Relative paths are taken from the command's working directory, as the linker takes them.
  kiln::tuner::CapturedCommand link{dir.path(), {"c++", "-O3", "v.o", "-o", "v", "-Wl,--as-needed", library.string(), "-lm"}};
  CHECK_FALSE(kiln::tuner::changed_link_input(link, built));

  std::filesystem::last_write_time(library, std::filesystem::file_time_type::clock::now());
  const auto changed = kiln::tuner::changed_link_input(link, built);
  REQUIRE(changed);
  CHECK(*changed == library);

  // The output itself, written after the build began, is not an input.
  std::filesystem::last_write_time(library, old_time);
  std::filesystem::last_write_time(executable, std::filesystem::file_time_type::clock::now());
  CHECK_FALSE(kiln::tuner::changed_link_input(link, built));
}

TEST_CASE("a failed build's excerpt leads with its error lines, not the compiler's information") {
  // ptxas -v prints every kernel's registers before the error that failed the build.
  std::string log;
  for (int i = 0; i < 40; ++i) log += "ptxas info    : Used " + std::to_string(i) + " registers\n";
  log += "variant.cu(12): error: identifier \"x\" is undefined\n";
  log += "1 error detected in the compilation of \"variant.cu\".\n";
  log += "kiln: compiling v failed (exit code 2)\n";
  const std::string excerpt = kiln::tuner::failure_excerpt(log, 12);
  CHECK(excerpt ==
        "variant.cu(12): error: identifier \"x\" is undefined\n"
        "1 error detected in the compilation of \"variant.cu\".\n"
        "kiln: compiling v failed (exit code 2)\n");
  // Only max_lines of them.
  CHECK(kiln::tuner::failure_excerpt(log, 1) == "variant.cu(12): error: identifier \"x\" is undefined\n");
  // A log without one: its last lines.
  CHECK(kiln::tuner::failure_excerpt("a\nb\nc\nd\n", 2) == "c\nd\n");
  CHECK(kiln::tuner::failure_excerpt("", 3).empty());
}

TEST_CASE("compiles wait for their own processes only: a child another thread runs meanwhile keeps its exit status") {
  // The tuner measures variants in child processes while it compiles others (on demand, on
  // several GPUs); a compile loop that reaped any child took a variant's exit status from the
  // thread waiting for it, which then failed with "waitpid: No child processes".
  kiln_test::GeneratedToy toy;
  const auto& dir = toy.dir;
  kiln_test::write_file(dir / "template.cpp", "");
  kiln_test::write_file(dir / "cc.sh", "sleep 1\n: > \"$3\"\n");  // cc.sh <source> -o <object>
  kiln_test::write_file(dir / "ld.sh", "cp /bin/true \"$3\"\n");  // ld.sh <object> -o <executable>
  save_captured_command(dir / "compile.json", {dir.path(), {"/bin/sh", (dir / "cc.sh").string(),
                                                             (dir / "template.cpp").string(), "-o",
                                                             (dir / "template.o").string()}});
  save_captured_command(dir / "link.json", {dir.path(), {"/bin/sh", (dir / "ld.sh").string(),
                                                          (dir / "template.o").string(), "-o",
                                                          (dir / "template").string()}});
  CompileOptions o;
  o.compile_command = dir / "compile.json";
  o.link_command = dir / "link.json";
  o.template_source = dir / "template.cpp";
  o.variants_dir = dir / "bin";
  o.objects_dir = dir / "objects";
  o.build_records_dir = dir / "builds";
  o.only = {toy.manifest.default_variant};
  o.jobs = 1;

  // Started beside the compiler, it ends while the compiler still runs.
  std::optional<ChildResult> other;
  std::string other_error;
  std::thread measuring([&] {
    try {
      other = run_child({"/bin/sh", "-c", "sleep 0.3; exit 7"}, std::chrono::duration<double>(30),
                        [](const std::string&) {});
    } catch (const std::exception& e) {
      other_error = e.what();
    }
  });
  const CompileSummary summary = compile_variants(toy.manifest, o);
  measuring.join();
  CHECK(other_error.empty());
  REQUIRE(other);
  CHECK(other->exit_code == 7);
  CHECK(summary.compiled == 1);
  CHECK(summary.failed == 0);
  CHECK(std::filesystem::exists(dir / "bin" / toy.manifest.default_variant));
}
