// The bottleneck rule (tuner/bottleneck.hpp) on metric sets recorded with ncu on an H100
// (tests/tuner/data/README.md), and on those sets with one number changed to cross a threshold.
#include <filesystem>

#include "bottleneck.hpp"
#include "kiln/model/json_reader.hpp"
#include "kiln_catch.hpp"
#include "temp_dir.hpp"

using kiln::tuner::BottleneckKind;
using kiln::tuner::KernelMetrics;
using kiln_test::ContainsSubstring;

namespace {

std::vector<KernelMetrics> recorded() {
  const std::string csv =
      kiln_test::read_file(std::filesystem::path(KILN_SOURCE_DIR) / "tests/tuner/data/ncu_raw_h100.csv");
  std::vector<KernelMetrics> out;
  for (const auto& l : kiln::tuner::parse_ncu_csv(csv, "ncu_raw_h100.csv")) out.push_back(kiln::tuner::metrics_from_ncu(l));
  return out;
}

}  // namespace

TEST_CASE("bottleneck: 66 CTAs on 132 SMs is parallelism, whatever the throughputs") {
  const KernelMetrics m = recorded().at(0);
  CHECK(*m.ctas == 66);
  CHECK(*m.sm_count == 132);
  const auto b = kiln::tuner::classify(m);
  CHECK(b.kind == BottleneckKind::parallelism);
  CHECK(b.reason == "66 CTAs on 132 SMs: 66 SMs get no work");
}

TEST_CASE("bottleneck: DRAM at 75% of peak is memory, and the recorded stalls come sorted") {
  const KernelMetrics m = recorded().at(1);
  CHECK(*m.ctas_per_sm == 16);  // 4096 CTAs / (1.94 waves x 132 SMs)
  CHECK(*m.local_instructions == 32768 + 262144);
  REQUIRE(m.stalls.size() == kiln::tuner::ncu_stall_reasons().size());
  CHECK(m.stalls.front().first == "long_scoreboard");
  const auto b = kiln::tuner::classify(m);
  CHECK(b.kind == BottleneckKind::memory);
  CHECK_THAT(b.reason, ContainsSubstring("DRAM near peak: SM 41%, memory 75% (DRAM 75%, L2 75%)"));
  CHECK(b.flags.empty());
}

TEST_CASE("bottleneck: SM near peak and memory below is compute") {
  KernelMetrics m = recorded().at(1);
  m.sm_pct = 88;
  m.memory_pct = m.dram_pct = m.l2_pct = 30;
  const auto b = kiln::tuner::classify(m);
  CHECK(b.kind == BottleneckKind::compute);
  CHECK_THAT(b.reason, ContainsSubstring("SM near peak: SM 88%"));
}

TEST_CASE("bottleneck: neither near peak is instructions, naming the top stall") {
  KernelMetrics m = recorded().at(1);
  m.memory_pct = m.dram_pct = m.l2_pct = 40;
  const auto b = kiln::tuner::classify(m);
  CHECK(b.kind == BottleneckKind::instructions);
  CHECK_THAT(b.reason, ContainsSubstring("top stall long_scoreboard (11.0 warps per issue)"));
}

TEST_CASE("bottleneck: low achieved occupancy with low throughputs is parallelism") {
  KernelMetrics m = recorded().at(1);
  m.memory_pct = m.dram_pct = m.l2_pct = 40;
  m.achieved_occupancy_pct = 12;
  const auto b = kiln::tuner::classify(m);
  CHECK(b.kind == BottleneckKind::parallelism);
  CHECK_THAT(b.reason, ContainsSubstring("achieved occupancy 12%"));
  // Near peak, low occupancy is no problem: memory it stays.
  m.dram_pct = 80;
  CHECK(kiln::tuner::classify(m).kind == BottleneckKind::memory);
}

TEST_CASE("bottleneck: a last wave that leaves most SMs idle is flagged from the shape alone") {
  // The shape as the harness reports it (launch_shapes.hpp), as recorded on the H100 for the
  // second kernel, with the grid changed.
  const kiln::model::JsonFile recorded = kiln::model::parse_json_text(
      "shape",
      R"j({"block":[128,1,1],"ctas":4096,"ctas_per_sm":16,"dynamic_shared_bytes":512,"grid":[4096,1,1],)j"
      R"j("kernel":"local_array(float*, int, int)","local_bytes":256,"registers":32,"static_shared_bytes":0,)j"
      R"j("threads_per_cta":128})j");
  kiln::model::LaunchShape shape = kiln::model::launch_shape_from_json(kiln::model::JsonNode::root(recorded));
  CHECK(kiln::tuner::launch_flags(kiln::tuner::metrics_from_shape(shape, 132)).empty());
  shape.ctas = 2112 + 40;  // one full wave of 16 x 132, then 40 CTAs on 40 SMs
  auto flags = kiln::tuner::launch_flags(kiln::tuner::metrics_from_shape(shape, 132));
  REQUIRE(flags.size() == 1);
  CHECK(flags.front() == "last wave uses 30% of the SMs (1.02 waves of 2112 CTAs)");
  CHECK(kiln::tuner::classify(kiln::tuner::metrics_from_shape(shape, 132)).kind == BottleneckKind::parallelism);
  // Many full waves make a short last wave cheap: no flag.
  shape.ctas = 5 * 2112 + 40;
  CHECK(kiln::tuner::launch_flags(kiln::tuner::metrics_from_shape(shape, 132)).empty());
  // A shape that shows nothing wrong, without metrics, decides nothing.
  shape.ctas = 4096;
  CHECK(kiln::tuner::classify(kiln::tuner::metrics_from_shape(shape, 132)).kind == BottleneckKind::unknown);
  // Without the SM count there is nothing to compare with.
  CHECK(kiln::tuner::launch_flags(kiln::tuner::metrics_from_shape(shape, std::nullopt)).empty());
}

TEST_CASE("bottleneck: the dominant launch is the longest, or without times the widest") {
  auto launches = recorded();
  CHECK(kiln::tuner::dominant_launch(launches) == 1);
  for (auto& l : launches) l.duration_s.reset();
  launches[0].ctas = 100000;
  CHECK(kiln::tuner::dominant_launch(launches) == 0);
}
