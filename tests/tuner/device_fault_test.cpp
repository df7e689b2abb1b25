// A variant process whose device cannot be set up ran nothing of the variant. The variant here is
// toy_cpu's default linked with the real CUDA harness, run with every GPU hidden
// (CUDA_VISIBLE_DEVICES=""), so its device setup fails for real, with or without a GPU in the
// machine: the harness says so as a "device" error, and the tuner runs it again, then stops the
// tuning, never recording the machine's fault against the variant.
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "evaluate.hpp"
#include "kiln/error.hpp"
#include "sanitize.hpp"
#include "kiln_catch.hpp"
#include "manifest.hpp"
#include "temp_dir.hpp"

using kiln_test::ContainsSubstring;
namespace model = kiln::model;

namespace {

bool have_cuda_harness() {
  if (std::string(KILN_TOY_CUDA_VARIANT).empty()) {
    WARN("skipped: this build has no CUDA harness (no CUDA compiler), so no variant whose device setup can fail");
    return false;
  }
  return true;
}

// Runs `first` on the first call and `then` on every later one, counting the calls in `count`;
// both are real variant executables, the first with every GPU hidden.
std::filesystem::path wrapper(const std::filesystem::path& at, const std::filesystem::path& count, const std::string& first,
                              const std::string& then) {
  kiln_test::write_file(at, "#!/bin/sh\necho run >> '" + count.string() + "'\n" +
                                "if [ \"$(wc -l < '" + count.string() + "')\" -le 1 ]; then CUDA_VISIBLE_DEVICES= exec '" +
                                first + "' \"$@\"; fi\nCUDA_VISIBLE_DEVICES= exec '" + then + "' \"$@\"\n");
  chmod(at.c_str(), 0755);
  return at;
}

int lines_of(const std::filesystem::path& file) {
  std::ifstream in(file);
  int n = 0;
  for (std::string line; std::getline(in, line);) ++n;
  return n;
}

struct Tuning {
  kiln_test::TempDir dir{"kiln-device-fault"};
  kiln::tuner::Manifest manifest = kiln::tuner::load_manifest(KILN_TOY_MANIFEST);
  kiln::worklog::Worklog log = kiln::worklog::Worklog::open(dir / "w.sqlite");
  kiln::tuner::EvaluationContext ctx;
  std::size_t v = 0;

  Tuning() {
    ctx.manifest = &manifest;
    ctx.log = &log;
    kiln::worklog::Session session;
    session.kernel = manifest.kernel;
    session.strategy = "exhaustive";
    session.context_key = "ctx";
    ctx.session_id = log.start_session(session);
    ctx.context_key = "ctx";
    ctx.variants_dir = dir / "variants";
    ctx.build_records_dir = dir / "records";
    ctx.scratch_dir = dir / "scratch";
    ctx.repetitions = 3;
    ctx.quiet_wait_s = 0;
    ctx.busy_remeasures = 0;
    ctx.device_retry_pause_s = 0;
    ctx.timeout_s = 60;
    std::filesystem::create_directories(ctx.variants_dir);
    v = *manifest.variant_index(manifest.default_variant);
  }
  kiln::worklog::VariantKey key() {
    return {ctx.context_key, manifest.kernel, manifest.variants[v].name, kiln::tuner::variant_hash(ctx, v)};
  }
};

}  // namespace

TEST_CASE("harness: a device that cannot be set up is a device error, exit code 5, before anything runs") {
  if (!have_cuda_harness()) return;
  kiln_test::TempDir dir("kiln-device-fault");
  model::Plan plan;
  plan.bench = {kiln::tuner::load_manifest(KILN_TOY_MANIFEST).problems.front()};
  std::vector<model::Event> events;
  auto limit = [] { return std::chrono::duration<double>(60); };
  const auto r = kiln::tuner::run_plan(KILN_TOY_CUDA_VARIANT, plan, dir.path(), kiln::tuner::SilenceLimit(limit),
                                       [&](const model::Event& e) { events.push_back(e); }, {{"CUDA_VISIBLE_DEVICES", ""}});
  CHECK(r.exit_code == 5);
  REQUIRE(events.size() == 1);
  const auto* error = std::get_if<model::ErrorEvent>(&events.front());
  REQUIRE(error != nullptr);
  CHECK(error->kind == model::HarnessFailure::device);
  CHECK(error->stage == std::string("device setup"));
  CHECK_FALSE(error->index);
  CHECK_FALSE(error->message.empty());
}

TEST_CASE("tuner: a device that stays unusable stops the tuning after three runs, nothing recorded against the variant") {
  if (!have_cuda_harness()) return;
  Tuning t;
  const auto count = t.dir / "runs";
  wrapper(t.ctx.variants_dir / t.manifest.variants[t.v].name, count, KILN_TOY_CUDA_VARIANT, KILN_TOY_CUDA_VARIANT);
  try {
    kiln::tuner::evaluate_variant(t.ctx, t.v);
    FAIL("the tuning went on");
  } catch (const kiln::RefusedError& e) {
    CHECK_THAT(std::string(e.what()), ContainsSubstring(t.manifest.variants[t.v].name +
                                                        ": the device could not be set up in 3 runs of the variant ("));
    CHECK_THAT(std::string(e.what()), ContainsSubstring("a fault of the machine, not of the variant"));
  }
  CHECK(lines_of(count) == 3);
  CHECK_FALSE(t.log.variant_failure(t.key()));
  CHECK(t.log.variant_failures(t.ctx.context_key, t.manifest.kernel).empty());
}

TEST_CASE("tuner: a device that fails to set up once is run again, and the timing is taken as if nothing happened") {
  if (!have_cuda_harness()) return;
  Tuning t;
  const auto count = t.dir / "runs";
  // The toy's checks compare nothing (the harness refuses such a check), so the run is a timing:
  // a coverage point's, which goes through the same runs.
  wrapper(t.ctx.variants_dir / t.manifest.variants[t.v].name, count, KILN_TOY_CUDA_VARIANT, KILN_TOY_VARIANT);
  const kiln::Problem& p = t.manifest.problems.front();
  const kiln::tuner::PointTimes times = kiln::tuner::time_points(t.ctx, t.v, {p});
  CHECK(lines_of(count) == 2);
  CHECK(times.failure.empty());
  REQUIRE(times.median_s.count(p.key()) == 1);
  CHECK(times.median_s.at(p.key()) > 0);
  CHECK_FALSE(t.log.variant_failure(t.key()));
}

TEST_CASE("sanitizer gate: a device that stays unusable stops the tuning after three runs, no sanitizer failure") {
  // The gate's runs read the harness's events like the search's: a device error is the machine's
  // fault, run again, then the tuning stops. The runs go through a launcher that takes
  // compute-sanitizer's options and runs the variant as it would, uninstrumented: under
  // compute-sanitizer itself an empty CUDA_VISIBLE_DEVICES hides no GPU (the variant set up the
  // H200 and ran, 2026-11-29), so no real device fault can be made under it.
  if (!have_cuda_harness()) return;
  Tuning t;
  const auto count = t.dir / "runs";
  wrapper(t.ctx.variants_dir / t.manifest.variants[t.v].name, count, KILN_TOY_CUDA_VARIANT, KILN_TOY_CUDA_VARIANT);
  const auto launcher = t.dir / "launcher";
  kiln_test::write_file(launcher,
                        "#!/bin/sh\n"
                        "# --tool T --error-exitcode N --log-file L, then the variant and its arguments\n"
                        "[ \"$1\" = --tool ] && [ \"$3\" = --error-exitcode ] && [ \"$5\" = --log-file ] || exit 64\n"
                        "shift 6\nexec \"$@\"\n");
  chmod(launcher.c_str(), 0755);
  try {
    const kiln::tuner::SanitizerResult r = kiln::tuner::sanitize_variant(t.ctx, t.v, launcher);
    FAIL("the gate went on: ran " << r.ran << ", clean " << r.clean << ", " << r.detail);
  } catch (const kiln::RefusedError& e) {
    CHECK_THAT(std::string(e.what()), ContainsSubstring(t.manifest.variants[t.v].name +
                                                        ": compute-sanitizer --tool memcheck: the device could not be "
                                                        "set up in 3 runs of the variant ("));
  }
  CHECK(lines_of(count) == 3);
}
