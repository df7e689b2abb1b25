// `kiln merge` and `kiln tune --shard` as a user meets them: bad input is one message naming the
// file and what differs, with exit code 1 (2 for usage), and nothing written.
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "committed_worklog.hpp"
#include "kiln/worklog/worklog.hpp"
#include "kiln_catch.hpp"
#include "kiln_command.hpp"
#include "temp_dir.hpp"

using kiln_test::ContainsSubstring;
using kiln_test::run_kiln;
namespace fs = std::filesystem;

namespace {

fs::path shard(const kiln_test::TempDir& dir, const std::string& name, const std::string& device,
               const std::string& context, const std::string& kiln_version) {
  const fs::path path = dir / name;
  auto log = kiln::worklog::Worklog::open(path);
  kiln::worklog::Session s;
  s.kernel = "softmax_cpu";
  s.strategy = "exhaustive";
  s.device = device;
  s.context_key = context;
  s.kiln_version = kiln_version;
  s.note = name;
  const auto id = log.start_session(s);
  kiln::worklog::Measurement m;
  m.key = {context, "softmax_cpu", "softmax_cpu__" + name, "h", "rows=4", kiln::worklog::Phase::bench};
  m.result = R"({"median_s":1e-6})";
  m.median_s = 1e-6;
  m.session_id = id;
  log.put_measurement(m);
  log.end_session(id);
  return path;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string out;
  for (const auto& l : lines) out += l + "\n";
  return out;
}

const std::string kContext = "00112233445566778899aabbccddeeff";
const std::string kEpyc = R"({"backend":"cpu","name":"AMD EPYC"})";

}  // namespace

TEST_CASE("kiln merge combines shards, and merging them again changes nothing", "[cli]") {
  kiln_test::TempDir tmp("kiln-cli-merge");
  const fs::path a = shard(tmp, "a.sqlite", kEpyc, kContext, "0.1.0");
  const fs::path b = shard(tmp, "b.sqlite", kEpyc, kContext, "0.1.0");
  const std::string out = (tmp / "merged.sqlite").string();
  const auto merged = run_kiln({"merge", "--out", out, a.string(), b.string()});
  REQUIRE(merged.exit_code == 0);
  CHECK_THAT(joined(merged.out), ContainsSubstring(out + ": 2 sessions and 2 measurements added"));
  const std::string bytes = kiln_test::read_file(out);

  const auto again = run_kiln({"merge", "--out", out, a.string(), b.string(), a.string()});
  REQUIRE(again.exit_code == 0);
  CHECK_THAT(joined(again.out), ContainsSubstring(out + " holds 2 sessions and 2 measurements; merging into it"));
  CHECK_THAT(joined(again.out), ContainsSubstring(out + ": 0 sessions and 0 measurements added, 0 rows replaced"));
  CHECK_THAT(joined(again.out), ContainsSubstring("merged " + a.string() + ": 0 sessions, 0 attempts, 0 links, 0 measurements"));
  auto log = kiln::worklog::Worklog::open(out, kiln::worklog::OpenMode::read_only);
  CHECK(log.sessions().size() == 2);
  CHECK(log.measurements(kContext, "softmax_cpu").size() == 2);
}

TEST_CASE("kiln merge refuses bad input with one message", "[cli]") {
  kiln_test::TempDir tmp("kiln-cli-merge");
  const fs::path a = shard(tmp, "a.sqlite", kEpyc, kContext, "0.1.0");
  const std::string out = (tmp / "merged.sqlite").string();
  auto refused = [&](const std::vector<std::string>& inputs, const std::string& message) {
    std::vector<std::string> args = {"merge", "--out", out};
    args.insert(args.end(), inputs.begin(), inputs.end());
    const auto run = run_kiln(args);
    CHECK(run.exit_code == 1);
    CHECK_THAT(run.err, ContainsSubstring("kiln: error: " + message));
    CHECK(run.err.find('\n') == run.err.size() - 1);  // one line
    CHECK_FALSE(fs::exists(out));
  };
  SECTION("different devices") {
    const fs::path gpu = shard(tmp, "gpu.sqlite", R"({"backend":"cuda","name":"NVIDIA H200","compute_capability":"9.0"})",
                               "ffeeddccbbaa99887766554433221100", "0.1.0");
    refused({a.string(), gpu.string()}, gpu.string() + ": kernel softmax_cpu: tuned on NVIDIA H200 (cuda, compute "
                                                       "capability 9.0) here and on AMD EPYC (cpu) in " + a.string());
  }
  SECTION("different Kiln versions") {
    const fs::path later = shard(tmp, "later.sqlite", kEpyc, "ffeeddccbbaa99887766554433221100", "0.2.0");
    refused({a.string(), later.string()},
            later.string() + ": kernel softmax_cpu: tuned by Kiln 0.2.0 here and by Kiln 0.1.0 in " + a.string() +
                ": worklogs of different Kiln versions do not merge");
  }
  SECTION("a corrupt file") {
    const fs::path corrupt = tmp / "corrupt.sqlite";
    std::string bytes = kiln_test::read_file(a);
    for (std::size_t i = 4096; i < bytes.size(); ++i) bytes[i] = static_cast<char>(0x5a);  // every page after the first
    kiln_test::write_file(corrupt, bytes);
    refused({a.string(), corrupt.string()}, corrupt.string() + ": corrupt");
  }
  SECTION("a missing file") { refused({a.string(), (tmp / "none.sqlite").string()}, (tmp / "none.sqlite").string() + ": no such worklog"); }
  SECTION("the same file twice is one file") {
    const auto run = run_kiln({"merge", "--out", out, a.string(), a.string()});
    REQUIRE(run.exit_code == 0);
    auto log = kiln::worklog::Worklog::open(out, kiln::worklog::OpenMode::read_only);
    CHECK(log.sessions().size() == 1);
    CHECK(log.measurements(kContext, "softmax_cpu").size() == 1);
  }
  SECTION("usage") {
    const auto no_out = run_kiln({"merge", a.string()});
    CHECK(no_out.exit_code == 2);
    CHECK_THAT(no_out.err, ContainsSubstring("--out"));
    const auto no_inputs = run_kiln({"merge", "--out", out});
    CHECK(no_inputs.exit_code == 2);
  }
}

TEST_CASE("kiln tune --shard is checked before anything runs", "[cli]") {
  kiln_test::TempDir tmp("kiln-cli-shard");
  const std::string any = (tmp / "any.json").string();
  kiln_test::write_file(any, "{}");
  const std::vector<std::string> base = {"tune", "--manifest", any, "--variants-dir", tmp.path().string(),
                                         "--build-records", tmp.path().string(), "--worklog",
                                         (tmp / "w.sqlite").string(), "--device", any, "--probe", any};
  auto with = [&](std::vector<std::string> extra) {
    std::vector<std::string> args = base;
    args.insert(args.end(), extra.begin(), extra.end());
    return run_kiln(args);
  };
  const auto past = with({"--shard", "2/2"});
  CHECK(past.exit_code == 2);
  CHECK_THAT(past.err, ContainsSubstring("--shard 2/2: i must be below N"));
  const auto anneal = with({"--shard", "0/2", "--strategy", "anneal"});
  CHECK(anneal.exit_code == 2);
  CHECK_THAT(anneal.err, ContainsSubstring("--shard needs --strategy exhaustive"));
  const auto unsharded = with({"--header-out", (tmp / "h.hpp").string()});
  CHECK(unsharded.exit_code == 2);
  CHECK_THAT(unsharded.err, ContainsSubstring("--record-out"));
  CHECK_FALSE(fs::exists(tmp / "w.sqlite"));
}

// The committed H200 worklog predates key versions: its contexts are of key version 1 (FNV-1a 64),
// found by their old keys, so kiln record rebuilds the records made from it byte for byte, from the
// file and from a merged copy of it. (Its softmax_cuda and attention_d256 records were tuned or
// edited after the rows this worklog holds, and differ from what kiln record makes of it with or
// without key versions; attention_d64, attention_d128 and softmax_cuda were tuned again into the
// key-version-2 worklog beside it, tested below.)
TEST_CASE("kiln record rebuilds the committed H200 records from the worklog of key version 1, merged or not", "[cli]") {
  const fs::path source(KILN_SOURCE_DIR);
  kiln_test::TempDir tmp("kiln-cli-legacy");
  fs::copy_file(kiln_test::committed_h200_worklog(), tmp / "worklog.sqlite");
  const auto merge = run_kiln({"merge", "--out", (tmp / "merged.sqlite").string(), (tmp / "worklog.sqlite").string()}, 60);
  REQUIRE(merge.exit_code == 0);
  for (const std::string kernel : {"nbody_cuda"}) {
    const std::string space = "kernels/nbody/" + kernel + ".space.json";
    const auto generated = run_kiln({"generate", "--space", (source / space).string(), "--target",
                                     (source / "presets/devices/h200.json").string(), "--out", (tmp / kernel).string()},
                                    60);
    REQUIRE(generated.exit_code == 0);
    for (const std::string worklog : {"worklog.sqlite", "merged.sqlite"}) {
      const fs::path record = tmp / (kernel + "." + worklog + ".record.json");
      const auto rebuilt = run_kiln({"record", "--manifest", (tmp / kernel / "manifest.json").string(), "--worklog",
                                     (tmp / worklog).string(), "--device", (source / "presets/devices/h200.json").string(),
                                     "--out", record.string()},
                                    60);
      REQUIRE(rebuilt.exit_code == 0);
      INFO(kernel << " from " << worklog);
      CHECK(kiln_test::read_file(record) ==
            kiln_test::read_file(source / "presets/records/h200" / (kernel + ".record.json")));
    }
  }
  auto log = kiln::worklog::Worklog::open(tmp / "worklog.sqlite", kiln::worklog::OpenMode::read_only);
  for (const auto& s : log.sessions()) CHECK(s.key_version == 1);
}

// The attention_d64 and attention_d128 records (PACK_GQA), the softmax_cuda record (its check on
// the device), the topk_cuda record and the attention_decode_d64 and attention_decode_d128
// records (the latter with tree_fit "regret") were tuned into a worklog of key version 2,
// committed compressed beside the older one (the two do not merge: same kernels, different keys);
// kiln record rebuilds them byte for byte from it.
TEST_CASE("kiln record rebuilds the attention, attention decode, softmax, top-k, selective scan and tree N-body records from the committed worklog of key version 2", "[cli]") {
  const fs::path source(KILN_SOURCE_DIR);
  kiln_test::TempDir tmp("kiln-cli-xxh3");
  kiln_test::unpack_xz_worklog("presets/records/h200/worklog-xxh3.sqlite.xz", tmp / "worklog.sqlite");
  const std::pair<std::string, std::string> kernels[] = {
      {"attention_d64", "attention"},        {"attention_d128", "attention"}, {"attention_decode_d64", "attention"},
      {"attention_decode_d128", "attention"}, {"softmax_cuda", "softmax"},    {"topk_cuda", "topk"},
      {"selective_scan_cuda", "scan"},       {"nbody_tree_cuda_e3", "nbody"}};
  for (const auto& [kernel, folder] : kernels) {
    const auto generated = run_kiln({"generate", "--space", (source / "kernels" / folder / (kernel + ".space.json")).string(),
                                     "--target", (source / "presets/devices/h200.json").string(), "--out",
                                     (tmp / kernel).string()},
                                    60);
    REQUIRE(generated.exit_code == 0);
    const fs::path record = tmp / (kernel + ".record.json");
    const fs::path committed = source / "presets/records/h200" / (kernel + ".record.json");
    // Each committed record's own context: the worklog also holds tunings of kernel sources that
    // were not taken (softmax_cuda with VEC_BYTES 0, 2026-11-28), kept for a later re-tune.
    const std::string context = nlohmann::json::parse(kiln_test::read_file(committed)).at("context_key");
    const auto rebuilt = run_kiln({"record", "--manifest", (tmp / kernel / "manifest.json").string(), "--worklog",
                                   (tmp / "worklog.sqlite").string(), "--device",
                                   (source / "presets/devices/h200.json").string(), "--out", record.string(),
                                   "--context", context},
                                  60);
    REQUIRE(rebuilt.exit_code == 0);
    INFO(kernel);
    CHECK(kiln_test::read_file(record) == kiln_test::read_file(committed));
  }
  auto log = kiln::worklog::Worklog::open(tmp / "worklog.sqlite", kiln::worklog::OpenMode::read_only);
  for (const auto& s : log.sessions()) CHECK(s.key_version == 2);
}

// The CPU machine's worklog (cpu-tune, 2026-11-30: topk_cpu, and a softmax_cpu tuning not taken) is committed beside the
// records; kiln record rebuilds topk_cpu's record from it byte for byte.
TEST_CASE("kiln record rebuilds the topk_cpu record from the committed CPU worklog", "[cli]") {
  const fs::path source(KILN_SOURCE_DIR);
  kiln_test::TempDir tmp("kiln-cli-cpu-worklog");
  kiln_test::unpack_xz_worklog("presets/records/cpu/worklog.sqlite.xz", tmp / "worklog.sqlite");
  const auto generated = run_kiln({"generate", "--space", (source / "kernels/topk/topk_cpu.space.json").string(),
                                   "--target", (source / "presets/devices/cpu.json").string(), "--out",
                                   (tmp / "gen").string()},
                                  60);
  REQUIRE(generated.exit_code == 0);
  const auto rebuilt = run_kiln({"record", "--manifest", (tmp / "gen/manifest.json").string(), "--worklog",
                                 (tmp / "worklog.sqlite").string(), "--device",
                                 (source / "presets/devices/cpu.json").string(), "--out",
                                 (tmp / "topk_cpu.record.json").string()},
                                60);
  REQUIRE(rebuilt.exit_code == 0);
  CHECK(kiln_test::read_file(tmp / "topk_cpu.record.json") ==
        kiln_test::read_file(source / "presets/records/cpu/topk_cpu.record.json"));
}

// Copies softmax_cuda's measurements of context `from` in worklog `source` into a new session of
// context `to` in worklog `target` (the same file or another, created if missing), started at
// `started_at`, each variant's name extended by `suffix`: what a later tuning of changed sources
// (no suffix) or of a changed space (its variants renamed) leaves behind.
namespace {
void copy_context(const fs::path& source, const fs::path& target, const std::string& from, const std::string& to,
                  const std::string& started_at, const std::string& suffix) {
  std::optional<kiln::worklog::Session> last;
  std::vector<kiln::worklog::Measurement> measurements;
  {
    // Read, and closed, before the target (maybe the same file) is written.
    const auto in = kiln::worklog::Worklog::open(source, kiln::worklog::OpenMode::read_only);
    for (const auto& s : in.sessions()) {
      if (s.context_key == from && (!last || s.started_at > last->started_at)) last = s;
    }
    measurements = in.measurements(from, "softmax_cuda");
  }
  REQUIRE(last.has_value());
  auto out = kiln::worklog::Worklog::open(target, kiln::worklog::OpenMode::create_if_missing);
  kiln::worklog::Session s = *last;
  s.started_at = started_at;
  s.ended_at.reset();
  s.context_key = to;
  const auto id = out.start_session(s);
  for (auto m : measurements) {
    m.key.context_key = to;
    m.key.variant += suffix;
    m.session_id = id;
    out.put_measurement(m);
  }
  out.end_session(id);
}
}  // namespace

// A tuning of changed sources that was not taken leaves a newer context of the kernel behind; the
// record of the checkout's context must still be reachable, and the choice never silent.
TEST_CASE("kiln record names the context it rebuilds when the worklog holds several, and takes --context", "[cli]") {
  const fs::path source(KILN_SOURCE_DIR);
  kiln_test::TempDir tmp("kiln-cli-contexts");
  const fs::path worklog = tmp / "worklog.sqlite";
  kiln_test::unpack_xz_worklog("presets/records/h200/worklog-xxh3.sqlite.xz", worklog);
  const fs::path committed = source / "presets/records/h200/softmax_cuda.record.json";
  const std::string committed_context = nlohmann::json::parse(kiln_test::read_file(committed)).at("context_key");
  const std::string newer = "0123456789abcdef0123456789abcdef";
  // The committed context's measurements again under a newer context, as a later tuning of other
  // sources of the same kernel would leave them.
  copy_context(worklog, worklog, committed_context, newer, "2030-01-01T00:00:00.000Z", "");
  const auto generated = run_kiln({"generate", "--space", (source / "kernels/softmax/softmax_cuda.space.json").string(),
                                   "--target", (source / "presets/devices/h200.json").string(), "--out",
                                   (tmp / "gen").string()},
                                  60);
  REQUIRE(generated.exit_code == 0);
  auto record = [&](const std::vector<std::string>& extra, const std::string& device = "h200") {
    std::vector<std::string> args{"record", "--manifest", (tmp / "gen/manifest.json").string(), "--worklog",
                                  worklog.string(), "--device", (source / "presets/devices" / (device + ".json")).string(),
                                  "--out", (tmp / "out.record.json").string()};
    args.insert(args.end(), extra.begin(), extra.end());
    fs::remove(tmp / "out.record.json");
    return run_kiln(args, 60);
  };

  const auto newest = record({});
  REQUIRE(newest.exit_code == 0);
  CHECK_THAT(newest.err, ContainsSubstring("tuning contexts of softmax_cuda on h200; using the newest, " + newer));
  CHECK_THAT(newest.err, ContainsSubstring("\n  " + committed_context + " ("));
  CHECK(nlohmann::json::parse(kiln_test::read_file(tmp / "out.record.json")).at("context_key") == newer);

  const auto named = record({"--context", committed_context});
  REQUIRE(named.exit_code == 0);
  CHECK(named.err.empty());
  CHECK(kiln_test::read_file(tmp / "out.record.json") == kiln_test::read_file(committed));

  const auto unknown = record({"--context", "ffffffffffffffffffffffffffffffff"});
  CHECK(unknown.exit_code == 1);
  CHECK_THAT(unknown.err, ContainsSubstring("--context ffffffffffffffffffffffffffffffff: "));
  CHECK_THAT(unknown.err, ContainsSubstring("\n  " + newer + " (1 session, 2030-01-01T00:00:00.000Z)"));
  CHECK_FALSE(fs::exists(tmp / "out.record.json"));

  const auto empty = record({"--context", ""});
  CHECK(empty.exit_code == 2);
  CHECK_THAT(empty.err, ContainsSubstring("an empty context key"));
  CHECK_FALSE(fs::exists(tmp / "out.record.json"));

  const auto other_device = record({}, "l4");
  CHECK(other_device.exit_code == 1);
  CHECK_THAT(other_device.err, ContainsSubstring("has no tuning session of kernel softmax_cuda on l4"));
  CHECK_FALSE(fs::exists(tmp / "out.record.json"));

  // A newer tuning of another space (a knob added: every variant renamed) measured none of the
  // manifest's variants: without --context the newest context that did is rebuilt, and naming the
  // other one is refused rather than rebuilding a record of nothing.
  const std::string renamed = "fedcba9876543210fedcba9876543210";
  copy_context(worklog, worklog, committed_context, renamed, "2031-01-01T00:00:00.000Z", "_KEY_WARPS1");
  const auto skipped = record({});
  REQUIRE(skipped.exit_code == 0);
  CHECK_THAT(skipped.err, ContainsSubstring("; using the newest that measured the manifest's variants, " + newer));
  CHECK_THAT(skipped.err, ContainsSubstring("\n  " + renamed + " (1 session, 2031-01-01T00:00:00.000Z)"));
  CHECK(nlohmann::json::parse(kiln_test::read_file(tmp / "out.record.json")).at("context_key") == newer);

  const auto none = record({"--context", renamed});
  CHECK(none.exit_code == 1);
  CHECK_THAT(none.err, ContainsSubstring("--context " + renamed + ": that tuning of softmax_cuda in " + worklog.string() +
                                         " measured none of the manifest's "));
  CHECK_FALSE(fs::exists(tmp / "out.record.json"));

  // A worklog that holds only such a tuning has nothing to rebuild from.
  const fs::path only_renamed = tmp / "renamed.sqlite";
  copy_context(worklog, only_renamed, committed_context, renamed, "2031-01-01T00:00:00.000Z", "_KEY_WARPS1");
  auto args = std::vector<std::string>{"record", "--manifest", (tmp / "gen/manifest.json").string(), "--worklog",
                                       only_renamed.string(), "--device", (source / "presets/devices/h200.json").string(),
                                       "--out", (tmp / "out.record.json").string()};
  const auto nothing = run_kiln(args, 60);
  CHECK(nothing.exit_code == 1);
  CHECK_THAT(nothing.err, ContainsSubstring(only_renamed.string() + " holds no tuning of softmax_cuda on h200 that "
                                            "measured any of the manifest's "));
  CHECK_FALSE(fs::exists(tmp / "out.record.json"));
}
