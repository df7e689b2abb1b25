#include "bottleneck.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "numbers.hpp"

namespace kiln::tuner {
namespace {

std::optional<double> metric(const NcuLaunch& l, const std::string& name) {
  auto it = l.metrics.find(name);
  if (it == l.metrics.end()) return std::nullopt;
  return it->second.value;
}

std::string count(double v) { return fixed(v, 0); }

}  // namespace

KernelMetrics metrics_from_ncu(const NcuLaunch& l) {
  KernelMetrics m;
  m.kernel = l.kernel;
  if (auto it = l.metrics.find("gpu__time_duration.sum"); it != l.metrics.end()) m.duration_s = seconds_from(it->second);
  m.sm_pct = metric(l, "sm__throughput.avg.pct_of_peak_sustained_elapsed");
  m.memory_pct = metric(l, "gpu__compute_memory_throughput.avg.pct_of_peak_sustained_elapsed");
  m.dram_pct = metric(l, "dram__throughput.avg.pct_of_peak_sustained_elapsed");
  m.l2_pct = metric(l, "lts__throughput.avg.pct_of_peak_sustained_elapsed");
  m.achieved_occupancy_pct = metric(l, "sm__warps_active.avg.pct_of_peak_sustained_active");
  m.theoretical_occupancy_pct = metric(l, "sm__maximum_warps_per_active_cycle_pct");
  m.registers = metric(l, "launch__registers_per_thread");
  auto ld = metric(l, "smsp__sass_inst_executed_op_local_ld.sum");
  auto st = metric(l, "smsp__sass_inst_executed_op_local_st.sum");
  if (ld || st) m.local_instructions = ld.value_or(0) + st.value_or(0);
  m.ctas = metric(l, "launch__grid_size");
  m.threads_per_cta = metric(l, "launch__block_size");
  auto dynamic = metric(l, "launch__shared_mem_per_block_dynamic");
  auto fixed_smem = metric(l, "launch__shared_mem_per_block_static");
  if (dynamic || fixed_smem) m.shared_bytes = dynamic.value_or(0) + fixed_smem.value_or(0);
  // launch__waves_per_multiprocessor is grid / (CTAs per SM x SMs), with the binding limit of
  // registers, shared memory, warps and blocks: the CTAs per SM follow from it.
  m.sm_count = metric(l, "device__attribute_multiprocessor_count");
  if (auto waves = metric(l, "launch__waves_per_multiprocessor"); waves && m.ctas && m.sm_count && *waves > 0) {
    m.ctas_per_sm = std::max(1.0, std::round(*m.ctas / (*waves * *m.sm_count)));
  }
  for (const auto& r : ncu_stall_reasons()) {
    if (auto v = metric(l, ncu_stall_metric(r))) m.stalls.emplace_back(r, *v);
  }
  std::stable_sort(m.stalls.begin(), m.stalls.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return m;
}

KernelMetrics metrics_from_shape(const model::LaunchShape& shape, std::optional<int> sm_count) {
  auto number = [](const std::optional<std::int64_t>& v) {
    return v ? std::optional<double>(static_cast<double>(*v)) : std::nullopt;
  };
  KernelMetrics m;
  m.kernel = shape.kernel;
  m.ctas = static_cast<double>(shape.ctas);
  m.threads_per_cta = static_cast<double>(shape.threads_per_cta);
  m.shared_bytes = static_cast<double>(shape.dynamic_shared_bytes + shape.static_shared_bytes.value_or(0));
  m.registers = number(shape.registers);
  m.local_bytes = number(shape.local_bytes);
  m.ctas_per_sm = number(shape.ctas_per_sm);
  if (sm_count) m.sm_count = *sm_count;
  return m;
}

const char* to_string(BottleneckKind kind) {
  switch (kind) {
    case BottleneckKind::parallelism: return "parallelism";
    case BottleneckKind::memory: return "memory";
    case BottleneckKind::compute: return "compute";
    case BottleneckKind::instructions: return "instructions";
    case BottleneckKind::unknown: break;
  }
  return "unknown";
}

std::vector<std::string> launch_flags(const KernelMetrics& m) {
  std::vector<std::string> flags;
  if (!m.ctas || !m.sm_count || *m.sm_count <= 0 || *m.ctas <= 0) return flags;
  const double ctas = *m.ctas, sms = *m.sm_count;
  if (ctas < sms) {
    flags.push_back(count(ctas) + " CTAs on " + count(sms) + " SMs: " + count(sms - ctas) + " SMs get no work");
    return flags;
  }
  // A wave is as many CTAs as the GPU holds at once; without the CTAs per SM, one per SM.
  const double per_sm = m.ctas_per_sm && *m.ctas_per_sm >= 1 ? *m.ctas_per_sm : 1;
  const double slots = per_sm * sms;
  const double full = std::floor(ctas / slots);
  const double tail_ctas = ctas - full * slots;
  if (tail_ctas <= 0 || full >= kFewWaves) return flags;
  // The SMs the last wave keeps busy, when its CTAs spread one per SM first.
  const double tail_sms = std::min(sms, tail_ctas);
  const double used = tail_sms / sms;
  if (full >= 1 && used < 0.5) {
    flags.push_back("last wave uses " + count(used * 100) + "% of the SMs (" + fixed(ctas / slots, 2) + " waves of " +
                    count(slots) + " CTAs)");
  }
  return flags;
}

Bottleneck classify(const KernelMetrics& m) {
  Bottleneck b;
  b.flags = launch_flags(m);
  const bool measured = m.sm_pct || m.memory_pct || m.dram_pct || m.l2_pct;
  const double sm = m.sm_pct.value_or(0);
  const double dram = m.dram_pct.value_or(0), l2 = m.l2_pct.value_or(0);
  const double memory = std::max({m.memory_pct.value_or(0), dram, l2});
  const std::string numbers = measured ? "SM " + fixed(sm, 0) + "%, memory " + fixed(memory, 0) + "% (DRAM " +
                                             fixed(dram, 0) + "%, L2 " + fixed(l2, 0) + "%) of peak"
                                       : std::string();
  if (!b.flags.empty()) {
    b.kind = BottleneckKind::parallelism;
    b.reason = b.flags.front();
    return b;
  }
  if (!measured) {
    b.reason = "launch shape only (no ncu metrics): it shows enough CTAs and no idle last wave";
    return b;
  }
  if (m.achieved_occupancy_pct && *m.achieved_occupancy_pct < kLowOccupancyPct && sm < kNearPeakPct &&
      memory < kNearPeakPct) {
    b.kind = BottleneckKind::parallelism;
    b.reason = "achieved occupancy " + fixed(*m.achieved_occupancy_pct, 0) + "% with " + numbers;
    return b;
  }
  if (memory >= kNearPeakPct && memory >= sm) {
    b.kind = BottleneckKind::memory;
    const char* unit = dram >= kNearPeakPct ? "DRAM" : l2 >= kNearPeakPct ? "L2" : "L1/shared memory";
    b.reason = std::string(unit) + " near peak: " + numbers;
    return b;
  }
  if (sm >= kNearPeakPct) {
    b.kind = BottleneckKind::compute;
    b.reason = "SM near peak: " + numbers;
    return b;
  }
  b.kind = BottleneckKind::instructions;
  b.reason = "neither near peak (" + numbers + ")";
  if (!m.stalls.empty()) {
    b.reason += "; top stall " + m.stalls.front().first + " (" + fixed(m.stalls.front().second, 1) + " warps per issue)";
  }
  return b;
}

std::size_t dominant_launch(const std::vector<KernelMetrics>& launches) {
  auto weight = [](const KernelMetrics& m) {
    return m.duration_s ? *m.duration_s : 0.0;
  };
  auto threads = [](const KernelMetrics& m) { return m.ctas.value_or(0) * m.threads_per_cta.value_or(0); };
  bool timed = std::any_of(launches.begin(), launches.end(), [](const KernelMetrics& m) { return m.duration_s.has_value(); });
  std::size_t best = 0;
  for (std::size_t i = 1; i < launches.size(); ++i) {
    if (timed ? weight(launches[i]) > weight(launches[best]) : threads(launches[i]) > threads(launches[best])) best = i;
  }
  return best;
}

}  // namespace kiln::tuner
