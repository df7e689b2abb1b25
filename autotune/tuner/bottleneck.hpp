// What limits a kernel, by the method's hierarchy: first parallelism (is the GPU given enough
// work?), then memory, then compute, then instructions (latency: neither resource near peak).
//
// The rule, applied in this order (thresholds are kNearPeakPct and the constants below):
//   parallelism  fewer CTAs than SMs; or a last wave that leaves most SMs idle (under half of
//                them busy, when there are fewer than kFewWaves full waves before it); or achieved
//                occupancy under kLowOccupancyPct while no throughput reaches kNearPeakPct
//   memory       DRAM, L2 or the memory system as a whole (ncu's memory throughput, which takes
//                the busiest of DRAM, L2 and L1) at kNearPeakPct of peak or more, and not below SM
//   compute      SM throughput at kNearPeakPct of peak or more
//   instructions neither near peak: the kernel waits on latency; the top stall reason says which
//   unknown      only the launch shape is known and it shows nothing wrong
// The launch-shape flags ("66 CTAs on 132 SMs", "last wave uses 12% of the SMs") need no profiler:
// the harness reads the shape while timing.
#pragma once
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/model/protocol.hpp"
#include "ncu.hpp"

namespace kiln::tuner {

inline constexpr double kNearPeakPct = 60;
inline constexpr double kLowOccupancyPct = 25;
inline constexpr double kFewWaves = 4;

// One kernel launch: what ncu measured, or only its shape. Unset: not known.
struct KernelMetrics {
  std::string kernel;
  std::optional<double> duration_s;
  std::optional<double> sm_pct;       // SM throughput, % of peak
  std::optional<double> memory_pct;   // memory system throughput (the busiest unit), % of peak
  std::optional<double> dram_pct;
  std::optional<double> l2_pct;
  std::optional<double> achieved_occupancy_pct;
  std::optional<double> theoretical_occupancy_pct;
  std::optional<double> registers;    // per thread
  std::optional<double> local_instructions;  // local memory loads and stores: spills, local arrays
  std::optional<double> local_bytes;  // local memory per thread (the shape's)
  std::optional<double> ctas;
  std::optional<double> threads_per_cta;
  std::optional<double> shared_bytes;  // dynamic + static, per CTA
  std::optional<double> ctas_per_sm;   // CTAs one SM can hold at once
  std::optional<double> sm_count;
  std::vector<std::pair<std::string, double>> stalls;  // reason, warps stalled per issue; largest first
};

KernelMetrics metrics_from_ncu(const NcuLaunch& launch);
// A launch shape as the harness reports it (kiln/model/protocol.hpp).
KernelMetrics metrics_from_shape(const model::LaunchShape& shape, std::optional<int> sm_count);

enum class BottleneckKind { parallelism, memory, compute, instructions, unknown };
const char* to_string(BottleneckKind kind);

struct Bottleneck {
  BottleneckKind kind = BottleneckKind::unknown;
  std::string reason;               // one line: the numbers that decided it
  std::vector<std::string> flags;   // launch shape findings, whatever the kind
};

// "66 CTAs on 132 SMs", "last wave uses 12% of the SMs (1.06 waves)": what the shape alone shows.
std::vector<std::string> launch_flags(const KernelMetrics& m);

Bottleneck classify(const KernelMetrics& m);

// The launch that takes longest (the one to classify a run by); without times, the one with the
// most threads.
std::size_t dominant_launch(const std::vector<KernelMetrics>& launches);

}  // namespace kiln::tuner
