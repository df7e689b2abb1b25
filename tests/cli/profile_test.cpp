// kiln profile and kiln report as a user meets them on a machine without Nsight Compute: a build
// tree with a real generated CUDA space, its record, and a worklog holding the launch shape the
// harness recorded while timing (as measured on an H100: 66 CTAs of 256 threads, 132 SMs).
#include <filesystem>

#include "kiln/gen/generate.hpp"
#include "kiln/worklog/worklog.hpp"
#include "kiln_catch.hpp"
#include "kiln_command.hpp"
#include "manifest.hpp"
#include "record.hpp"
#include "temp_dir.hpp"

using kiln_test::ContainsSubstring;
namespace fs = std::filesystem;

namespace {

const char* kShape =
    R"j([{"block":[256,1,1],"ctas":66,"ctas_per_sm":8,"dynamic_shared_bytes":0,"grid":[66,1,1],"kernel":"scale_rows(float*, int)","local_bytes":0,"registers":8,"static_shared_bytes":0,"threads_per_cta":256}])j";

struct TunedBuild {
  kiln_test::TempDir dir{"kiln-profile"};
  fs::path build = dir / "build";
  fs::path record_file = build / "kiln/softmax_cuda/softmax_cuda.record.json";
  fs::path worklog = build / "kiln/worklog.sqlite";
  std::string winner;

  TunedBuild() {
    const fs::path source(KILN_SOURCE_DIR);
    kiln::gen::generate(source / "kernels/softmax/softmax_cuda.space.json", source / "presets/devices/h200.json",
                        build / "kiln/softmax_cuda/generated");
    const auto m = kiln::tuner::load_manifest(build / "kiln/softmax_cuda/generated/manifest.json");
    winner = m.default_variant;
    kiln::tuner::Record r;
    r.kernel = m.kernel;
    r.backend = "cuda";
    r.space_hash = m.space_hash;
    r.context_key = "ctx";
    r.preset = "h100";
    r.device_name = "NVIDIA H100 80GB HBM3";
    r.date = "2026-11-23";
    r.strategy = "exhaustive";
    r.counts = {{"feasible", m.variants.size()}};
    kiln::tuner::RecordedBucket b;
    b.name = "all";
    b.winner = winner;
    b.time_s = 1e-4;
    b.floor_s = 5e-5;
    b.problems.push_back({m.problems.front(), 1e-4, 5e-5, "memory bandwidth"});
    r.buckets.push_back(b);
    kiln_test::write_file(record_file, kiln::tuner::record_text(r));

    auto log = kiln::worklog::Worklog::open(worklog);
    kiln::worklog::Session s;
    s.kernel = m.kernel;
    s.strategy = "exhaustive";
    s.context_key = "ctx";
    const auto session = log.start_session(s);
    kiln::worklog::Attempt a;
    a.session_id = session;
    a.kernel = m.kernel;
    a.variant = winner;
    a.hypothesis = "the space's default";
    a.change = "first configuration measured";
    a.result = 1e-4;
    a.unit = "s";
    log.add_attempt(a);
    log.put_launch_shapes({"ctx", m.kernel, winner, "h", m.problems.front().key()}, 132, kShape, session);
    log.end_session(session);
  }
};

// kiln in a child process with PATH and CUDA_HOME pointing nowhere: no ncu can be found.
kiln_test::KilnRun run_without_ncu(const std::vector<std::string>& args) {
  std::vector<std::string> argv = {KILN_EXECUTABLE};
  argv.insert(argv.end(), args.begin(), args.end());
  kiln_test::KilnRun run;
  auto limit = [] { return std::chrono::duration<double>(30); };
  const auto r = kiln::tuner::run_child(argv, kiln::tuner::SilenceLimit(limit),
                                        [&](const std::string& line) { run.out.push_back(line); },
                                        {{"PATH", "/nonexistent"}, {"CUDA_HOME", "/nonexistent"}});
  run.exit_code = r.exit_code;
  run.signal = r.signal;
  run.err = r.stderr_tail;
  return run;
}

std::string joined(const std::vector<std::string>& lines) {
  std::string s;
  for (const auto& l : lines) s += l + "\n";
  return s;
}

}  // namespace

TEST_CASE("kiln profile without ncu: says so, exits 1, and still prints the launch-shape flags") {
  if (fs::exists("/usr/local/cuda/bin/ncu")) {
    WARN("skipped: /usr/local/cuda/bin/ncu exists, so kiln profile finds it whatever PATH says");
    return;
  }
  TunedBuild b;
  const auto run = run_without_ncu({"profile", "--build", b.build.string()});
  CHECK(run.exit_code == 1);
  CHECK_THAT(run.err, ContainsSubstring("kiln: error: ncu (Nsight Compute) not found (PATH, $CUDA_HOME/bin, "
                                        "/usr/local/cuda/bin; or --ncu PATH): no metrics were measured"));
  const std::string out = joined(run.out);
  CHECK_THAT(out, ContainsSubstring("### Bottlenecks of softmax_cuda"));
  CHECK_THAT(out, ContainsSubstring(b.winner + " (winner)"));
  CHECK_THAT(out, ContainsSubstring("**parallelism** (launch shape): 66 CTAs on 132 SMs: 66 SMs get no work"));
  // Nothing written: no profile half, no journal beside the worklog.
  CHECK_FALSE(fs::exists(b.worklog.string() + "-wal"));
  auto log = kiln::worklog::Worklog::open(b.worklog, kiln::worklog::OpenMode::read_only);
  REQUIRE(log.profiles("ctx", "softmax_cuda").size() == 1);
  CHECK(log.profiles("ctx", "softmax_cuda").front().metrics.empty());
}

TEST_CASE("kiln report --record --worklog: the winner's bottleneck from its recorded launch shape") {
  TunedBuild b;
  const auto run = kiln_test::run_kiln({"report", "--record", b.record_file.string(), "--worklog", b.worklog.string()});
  REQUIRE(run.exit_code == 0);
  const std::string out = joined(run.out);
  CHECK_THAT(out, ContainsSubstring("| all | " ));
  CHECK_THAT(out, ContainsSubstring("66 CTAs / 132 SMs, 0.06 waves"));
  CHECK_THAT(out, ContainsSubstring("**parallelism** (launch shape): 66 CTAs on 132 SMs"));
  CHECK_THAT(out, ContainsSubstring("# Tuning session 1: softmax_cuda"));
}

TEST_CASE("kiln profile: a build tree it cannot use is one clear error") {
  TunedBuild b;
  auto run = kiln_test::run_kiln({"profile", "--build", (b.dir / "missing").string()});
  CHECK(run.exit_code == 2);
  CHECK_THAT(run.err, ContainsSubstring("--build"));
  run = kiln_test::run_kiln({"profile", "--build", b.dir.path().string()});
  CHECK(run.exit_code == 1);
  CHECK_THAT(run.err, ContainsSubstring("not a build tree of Kiln kernels (no kiln/ folder)"));
  run = kiln_test::run_kiln({"profile", "--build", b.build.string(), "--kernel", "nope"});
  CHECK(run.exit_code == 1);
  CHECK_THAT(run.err, ContainsSubstring("no kernel nope (no kiln/nope/generated/manifest.json)"));
  fs::remove(b.record_file);
  run = kiln_test::run_kiln({"profile", "--build", b.build.string()});
  CHECK(run.exit_code == 1);
  CHECK_THAT(run.err, ContainsSubstring("softmax_cuda not tuned in this build (no record; build with KILN_TUNE=ON first)"));
}
