// The versioned cache keys (XXH3-128 for new contexts, FNV-1a 64 kept for the contexts older
// worklogs hold) and `kiln tune --shard i/N`'s share of the variants.
#include <set>

#include "cache_key.hpp"
#include "kiln/hash.hpp"
#include "kiln/worklog/worklog.hpp"
#include "kiln_catch.hpp"
#include "open_tuning.hpp"
#include "shard.hpp"
#include "source_closure.hpp"
#include "tuner_fixture.hpp"

using namespace kiln::tuner;
namespace fs = std::filesystem;
using kiln_test::ContainsSubstring;

namespace {

// The probe of this project's development machine, as a CPU tuning sees it.
DeviceInfo epyc_probe() {
  DeviceInfo probe;
  probe.backend = "cpu";
  probe.name = "AMD EPYC";
  return probe;
}

}  // namespace

TEST_CASE("key version 2 is XXH3-128, version 1 is the FNV-1a 64 older worklogs were keyed with") {
  // XXH3-128 of the empty input, as xxHash publishes it.
  CHECK(key_hash(KeyVersion::xxh3_128, "") == "99aa06d3014798d86001c324468d497f");
  CHECK(key_hash(KeyVersion::xxh3_128, "kiln") == "29e4f6aff37a6f975bfb178850627e51");
  // Version 1 is byte for byte the hash the rows of older worklogs carry.
  CHECK(key_hash(KeyVersion::fnv1a64, "kiln") == kiln::fnv1a64_hex("kiln"));
  CHECK(KeyHasher(KeyVersion::fnv1a64).field("ab").field("c").hex() ==
        kiln::Fnv1a64().field("ab").field("c").hex());
  for (KeyVersion v : {KeyVersion::fnv1a64, KeyVersion::xxh3_128}) {
    CHECK(KeyHasher(v).field("ab").field("c").hex() != KeyHasher(v).field("a").field("bc").hex());
  }
  // The two forms cannot be mistaken for each other.
  CHECK(key_version_of(key_hash(KeyVersion::fnv1a64, "x")) == KeyVersion::fnv1a64);
  CHECK(key_version_of(key_hash(KeyVersion::xxh3_128, "x")) == KeyVersion::xxh3_128);
  CHECK_FALSE(key_version_of("ctx-h100"));
  CHECK_FALSE(key_version_of("99AA06D3014798D86001C324468D497F"));
  CHECK(key_version_from(1) == KeyVersion::fnv1a64);
  CHECK_THROWS_WITH(key_version_from(3), ContainsSubstring("key version 3 is not one this Kiln knows"));
  // The shards' split: XXH3-64, the same on every machine.
  CHECK(stable_hash("") == 0x2d06800538d394c2ull);
  CHECK(stable_hash("toy__TILE2_VEC8") == 13654570542606060582ull);
}

TEST_CASE("a tuning continues the context a worklog holds under key version 1, and starts new ones under 2") {
  kiln_test::GeneratedToy toy;
  TuneOptions o;
  DeviceInfo probe = epyc_probe();
  const std::string old_key = context_key(KeyVersion::fnv1a64, toy.manifest, probe, o);
  const std::string new_key = context_key(KeyVersion::xxh3_128, toy.manifest, probe, o);
  CHECK(old_key.size() == 16);
  CHECK(new_key.size() == 32);

  auto log = kiln::worklog::Worklog::open(toy.dir / "w.sqlite");
  ContextKey fresh = choose_context_key(log, toy.manifest, probe, o);
  CHECK(fresh.key == new_key);
  CHECK(fresh.version == KeyVersion::xxh3_128);

  kiln::worklog::Session legacy;
  legacy.kernel = "toy";
  legacy.strategy = "exhaustive";
  legacy.context_key = old_key;
  legacy.key_version = 1;
  log.start_session(legacy);
  ContextKey continued = choose_context_key(log, toy.manifest, probe, o);
  CHECK(continued.key == old_key);
  CHECK(continued.version == KeyVersion::fnv1a64);
  CHECK(context_key_version(log, old_key) == KeyVersion::fnv1a64);

  // Another kernel's legacy context is not this one's.
  probe.name = "another CPU";
  CHECK(choose_context_key(log, toy.manifest, probe, o).version == KeyVersion::xxh3_128);
  probe.name = "AMD EPYC";

  kiln::worklog::Session current = legacy;
  current.context_key = new_key;
  current.key_version = 2;
  log.start_session(current);
  CHECK(choose_context_key(log, toy.manifest, probe, o).key == new_key);
}

TEST_CASE("a CPU's instruction-set extensions are part of its context") {
  kiln_test::GeneratedToy toy;
  TuneOptions o;
  DeviceInfo probe = epyc_probe();
  // A probe that reports none (a GPU's) is keyed without the field (open_tuning.cpp appends it
  // only when present, so the GPU keys the committed worklogs hold do not move).
  const std::string without = context_key(KeyVersion::xxh3_128, toy.manifest, probe, o);
  // Two virtual machines of one model name, with and without AVX-512, are two contexts: the
  // same -march=native builds other code there, at other speeds (1.6-4.6x seen on softmax_cpu).
  probe.isa = "avx avx2 fma avx512f avx512bw avx512vl";
  const std::string wide = context_key(KeyVersion::xxh3_128, toy.manifest, probe, o);
  probe.isa = "avx avx2 fma";
  const std::string narrow = context_key(KeyVersion::xxh3_128, toy.manifest, probe, o);
  CHECK(wide != narrow);
  CHECK(wide != without);
  CHECK(narrow == context_key(KeyVersion::xxh3_128, toy.manifest, probe, o));
}

// topk_cuda's build named 8 of the 11 headers its variants include; an edit of an unnamed one
// (the sample kernel, 2026-11-30) left the context key as it was, and the tuning continued it.
TEST_CASE("the headers the sources include from their folders key the context, named or not") {
  kiln_test::GeneratedToy toy;
  const fs::path src = toy.dir / "kernel", inc = toy.dir / "include";
  fs::create_directories(src / "detail");
  fs::create_directories(inc / "lib");
  kiln_test::write_file(src / "toy.cuh",
                        "#include <vector>\n#include \"kiln/variant.hpp\"\n#include \"detail/step.cuh\"\n"
                        "// #include \"commented.cuh\"\n#include <lib/api.hpp>\n#include \"toy_check.hpp\"\n");
  kiln_test::write_file(src / "detail/step.cuh", "#pragma once\n#include \"../toy_check.hpp\"\n#include \"tile.cuh\"\n");
  // An include cycle (tile includes step, which includes tile) ends.
  kiln_test::write_file(src / "detail/tile.cuh", "#include \"step.cuh\"\nconstexpr int kTile = 8;\n");
  kiln_test::write_file(src / "toy_check.hpp", "#pragma once\n");
  kiln_test::write_file(src / "commented.cuh", "int commented;\n");
  kiln_test::write_file(inc / "lib/api.hpp", "#pragma once\n#include \"lib/impl.hpp\"\n");
  kiln_test::write_file(inc / "lib/impl.hpp", "int impl;\n");

  // Beside the including file first, then the include directories; what neither holds (the
  // system's, Kiln's own) and what a comment holds are left out; each file once, in the order met.
  using Paths = std::vector<fs::path>;
  CHECK(source_closure({src / "toy.cuh"}, {}) ==
        Paths{src / "toy.cuh", src / "detail/step.cuh", src / "toy_check.hpp", src / "detail/tile.cuh"});
  CHECK(source_closure({src / "toy.cuh"}, {inc}) == Paths{src / "toy.cuh", src / "detail/step.cuh", inc / "lib/api.hpp",
                                                         src / "toy_check.hpp", src / "detail/tile.cuh", inc / "lib/impl.hpp"});
  // A list that names everything already is the list: the keys of such contexts do not move.
  const Paths complete{src / "toy.cuh", src / "detail/step.cuh", src / "toy_check.hpp", src / "detail/tile.cuh"};
  CHECK(source_closure(complete, {}) == complete);

  TuneOptions o;
  o.sources = {src / "toy.cuh"};
  const DeviceInfo probe = epyc_probe();
  const std::string partial = context_key(KeyVersion::xxh3_128, toy.manifest, probe, o);
  o.sources = complete;
  CHECK(context_key(KeyVersion::xxh3_128, toy.manifest, probe, o) == partial);
  // An edit of a header no one named is a new context, and so is one of an include directory's.
  o.sources = {src / "toy.cuh"};
  kiln_test::write_file(src / "detail/tile.cuh", "constexpr int kTile = 16;\n");
  const std::string edited = context_key(KeyVersion::xxh3_128, toy.manifest, probe, o);
  CHECK(edited != partial);
  o.include_dirs = {inc};
  const std::string with_lib = context_key(KeyVersion::xxh3_128, toy.manifest, probe, o);
  CHECK(with_lib != edited);
  kiln_test::write_file(inc / "lib/impl.hpp", "int impl = 1;\n");
  const std::string impl_edited = context_key(KeyVersion::xxh3_128, toy.manifest, probe, o);
  CHECK(impl_edited != with_lib);
  // A commented include is no dependency: its file's bytes do not count.
  kiln_test::write_file(src / "commented.cuh", "int commented = 2;\n");
  CHECK(context_key(KeyVersion::xxh3_128, toy.manifest, probe, o) == impl_edited);
}

// The compile and tune steps' DEPFILE: what the build runs those steps again for.
TEST_CASE("the dependency file names the target and every keyed source, escaped for Make") {
  kiln_test::TempDir tmp("kiln-depfile");
  fs::create_directories(tmp / "a dir");
  kiln_test::write_file(tmp / "a dir/k#1.hpp", "#include \"inc$.hpp\"\n");
  kiln_test::write_file(tmp / "a dir/inc$.hpp", "int x;\n");
  const fs::path depfile = tmp / "out/tune.d";
  write_depfile(depfile, tmp / "tune.stamp", source_closure({tmp / "a dir/k#1.hpp"}, {}));
  const std::string dir = (tmp / "a dir").string();
  std::string escaped;
  for (char c : dir) escaped += c == ' ' ? std::string("\\ ") : std::string(1, c);
  CHECK(kiln_test::read_file(depfile) == (tmp / "tune.stamp").string() + ": \\\n  " + escaped + "/k\\#1.hpp \\\n  " +
                                             escaped + "/inc$$.hpp\n");
  CHECK_FALSE(fs::exists(tmp / "out/tune.d.partial"));
}

TEST_CASE("the shard option i/N is read strictly") {
  CHECK(parse_shard("0/1").count == 1);
  CHECK(parse_shard("3/4").index == 3);
  CHECK_THROWS_WITH(parse_shard("4/4"), ContainsSubstring("--shard 4/4: i must be below N (shards are numbered from 0: 0/4 to 3/4)"));
  CHECK_THROWS_WITH(parse_shard("1"), ContainsSubstring("--shard 1: expected i/N"));
  CHECK_THROWS_WITH(parse_shard("a/2"), ContainsSubstring("whole numbers"));
  CHECK_THROWS_WITH(parse_shard("-1/2"), ContainsSubstring("whole numbers"));
  CHECK_THROWS_WITH(parse_shard("0/0"), ContainsSubstring("N must be 1 to 4096"));
  CHECK_THROWS_WITH(parse_shard("0/2 "), ContainsSubstring("whole numbers"));
}

TEST_CASE("the shards of a run cover every variant exactly once") {
  kiln_test::GeneratedToy toy;
  const auto& m = toy.manifest;
  for (std::size_t n = 1; n <= 5; ++n) {
    std::multiset<std::size_t> seen;
    for (std::size_t i = 0; i < n; ++i) {
      for (std::size_t v : share_of({i, n}, m)) {
        seen.insert(v);
        CHECK(stable_hash(m.variants[v].name) % n == i);
      }
    }
    CHECK(seen.size() == m.variants.size());
    for (std::size_t v = 0; v < m.variants.size(); ++v) CHECK(seen.count(v) == 1);
  }
}

TEST_CASE("a shard's search is the exhaustive search over its share, and no other strategy shards") {
  kiln_test::GeneratedToy toy;
  const auto& m = toy.manifest;
  const SearchSpace space = SearchSpace::from(m);
  for (std::size_t i = 0; i < 2; ++i) {
    const Shard shard{i, 2};
    auto searcher = shard_searcher(make_searcher("exhaustive", space, {}, 1), m, shard);
    CHECK(searcher->name() == "exhaustive");
    const std::vector<std::size_t> share = share_of(shard, m);
    CHECK(searcher->planned() == share.size());
    std::set<std::size_t> proposed;
    while (auto v = searcher->propose()) {
      CHECK(in_share(shard, m.variants[*v].name));
      proposed.insert(*v);
      searcher->observe({*v, 1.0});
    }
    CHECK(proposed == std::set<std::size_t>(share.begin(), share.end()));
  }
  CHECK_THROWS_WITH(shard_searcher(make_searcher("anneal", space, {}, 1), m, {0, 2}),
                    ContainsSubstring("--shard 0/2 needs the exhaustive search, not anneal"));
}

namespace {

// A session of the toy kernel in `context`, recording `code` (empty: a session from before code keys).
kiln::worklog::Session toy_session(const std::string& context, const std::string& code) {
  kiln::worklog::Session s;
  s.kernel = "toy";
  s.strategy = "exhaustive";
  s.context_key = context;
  s.code_key = code;
  return s;
}

}  // namespace

TEST_CASE("a tuning whose sources differ in comments and whitespace only continues the context that measured that code") {
  kiln_test::GeneratedToy toy;
  DeviceInfo probe = epyc_probe();
  TuneOptions o;
  const auto kernel_source = toy.dir / "toy_kernel.cuh";
  const auto notes = toy.dir / "toy_notes.json";
  kiln_test::write_file(kernel_source, "// Four lanes a row.\ntemplate <int N> struct Tile { int lanes = 4; };\n");
  kiln_test::write_file(notes, "{\"lanes\": 4}");
  o.sources = {kernel_source, notes};

  auto log = kiln::worklog::Worklog::open(toy.dir / "w.sqlite");
  const ContextKey first = choose_context_key(log, toy.manifest, probe, o);
  CHECK(first.key == context_key(KeyVersion::xxh3_128, toy.manifest, probe, o));
  CHECK(first.code == code_key(toy.manifest, probe, o));
  CHECK(first.code != first.key);
  CHECK_FALSE(first.by_code);
  const kiln::worklog::Session measured = toy_session(first.key, first.code);
  log.start_session(measured);
  CHECK(log.sessions().back().code_key == first.code);

  // The comment reworded, the file indented and given CRLF line ends: its bytes changed, its code
  // did not, and the measurements of that code are found.
  kiln_test::write_file(kernel_source,
                        "// Four lanes a row: a reworded comment\r\n// over two lines.\r\ntemplate <int N>\r\n"
                        "struct Tile {\r\n  int lanes = 4;  /* why four */\r\n};\r\n");
  CHECK(context_key(KeyVersion::xxh3_128, toy.manifest, probe, o) != first.key);
  const ContextKey reworded = choose_context_key(log, toy.manifest, probe, o);
  CHECK(reworded.key == first.key);
  CHECK(reworded.version == KeyVersion::xxh3_128);
  CHECK(reworded.code == first.code);
  CHECK(reworded.by_code);

  // A change of the code is a new context.
  kiln_test::write_file(kernel_source, "template <int N> struct Tile { int lanes = 8; };\n");
  const ContextKey changed = choose_context_key(log, toy.manifest, probe, o);
  CHECK(changed.key != first.key);
  CHECK(changed.code != first.code);
  CHECK_FALSE(changed.by_code);
  // So is a change of a source that is no C, C++ or CUDA, spaces included: it is hashed by its bytes.
  kiln_test::write_file(kernel_source, "// Four lanes a row.\ntemplate <int N> struct Tile { int lanes = 4; };\n");
  CHECK(choose_context_key(log, toy.manifest, probe, o).key == first.key);
  kiln_test::write_file(notes, "{\"lanes\":  4}");
  CHECK_FALSE(choose_context_key(log, toy.manifest, probe, o).key == first.key);
  kiln_test::write_file(notes, "{\"lanes\": 4}");

  // Another device's sessions of the same sources are not this context.
  probe.name = "another CPU";
  CHECK_FALSE(choose_context_key(log, toy.manifest, probe, o).by_code);
  probe.name = "AMD EPYC";

  // A session of an older file, which recorded no code key, is found by its context key only;
  // the next session in that context records it.
  kiln_test::write_file(kernel_source, "int legacy = 1;  // one\n");
  kiln::worklog::Session older = measured;
  older.context_key = context_key(KeyVersion::xxh3_128, toy.manifest, probe, o);
  older.code_key.clear();
  log.start_session(older);
  const ContextKey same_bytes = choose_context_key(log, toy.manifest, probe, o);
  CHECK(same_bytes.key == older.context_key);
  CHECK_FALSE(same_bytes.by_code);
  CHECK(same_bytes.code == code_key(toy.manifest, probe, o));
  kiln_test::write_file(kernel_source, "int legacy = 1;  // one, reworded\n");
  CHECK(choose_context_key(log, toy.manifest, probe, o).key != older.context_key);
  kiln_test::write_file(kernel_source, "int legacy = 1;  // one\n");
  kiln::worklog::Session continued = older;
  continued.code_key = same_bytes.code;
  log.start_session(continued);
  kiln_test::write_file(kernel_source, "int legacy = 1;  // one, reworded\n");
  const ContextKey found = choose_context_key(log, toy.manifest, probe, o);
  CHECK(found.key == older.context_key);
  CHECK(found.by_code);
}

TEST_CASE("of two contexts of one code, the tuning continues the one of the newest session") {
  // Comments that went back and forth: an early tuning of these bytes (no code key recorded), then
  // a later, complete one of the same code with the comment reworded. The sources as they are now
  // are the early one's bytes, and the later context is the one to continue.
  kiln_test::GeneratedToy toy;
  DeviceInfo probe = epyc_probe();
  TuneOptions o;
  const auto kernel_source = toy.dir / "toy_kernel.cuh";
  o.sources = {kernel_source};
  auto log = kiln::worklog::Worklog::open(toy.dir / "w.sqlite");
  kiln_test::write_file(kernel_source, "// Two rows a warp.\nint rows = 2;\n");
  const kiln::worklog::Session early = toy_session(context_key(KeyVersion::xxh3_128, toy.manifest, probe, o), "");
  log.start_session(early);  // before code keys: none recorded
  kiln_test::write_file(kernel_source, "// Two rows a warp, reworded.\nint rows = 2;\n");
  const kiln::worklog::Session later =
      toy_session(context_key(KeyVersion::xxh3_128, toy.manifest, probe, o), code_key(toy.manifest, probe, o));
  REQUIRE(later.context_key != early.context_key);
  log.start_session(later);

  kiln_test::write_file(kernel_source, "// Two rows a warp.\nint rows = 2;\n");  // the early bytes again
  const ContextKey chosen = choose_context_key(log, toy.manifest, probe, o);
  CHECK(chosen.key == later.context_key);
  CHECK(chosen.by_code);
  // A newer session of the early bytes makes that context the newest again.
  log.start_session(toy_session(early.context_key, code_key(toy.manifest, probe, o)));
  const ContextKey back = choose_context_key(log, toy.manifest, probe, o);
  CHECK(back.key == early.context_key);
  CHECK_FALSE(back.by_code);
  // Another code is neither.
  kiln_test::write_file(kernel_source, "int rows = 4;\n");
  const ContextKey other = choose_context_key(log, toy.manifest, probe, o);
  CHECK(other.key != early.context_key);
  CHECK(other.key != later.context_key);
}
