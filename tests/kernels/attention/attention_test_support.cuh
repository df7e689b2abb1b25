// Shared by the attention tests: skip (exit 77) without a CUDA device, run one variant on one
// problem through the Kiln workload (poison, run, check), and judge the result with the spaces'
// tolerances. Each failure prints the problem, the variant and the numbers.
#pragma once
#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "attention_workload.cuh"
#include "kiln/problem.hpp"

namespace attention_test {

inline void require_device_or_skip() {
  int count = 0;
  if (cudaGetDeviceCount(&count) != cudaSuccess || count == 0) {
    std::printf("SKIP: no CUDA device; the attention tests need one\n");
    std::exit(77);
  }
}

struct Case {
  int B, Hq, Hkv, Sq, Sk;
  const char* dtype;
  const char* mask;
  const char* layout;
};

inline kiln::Problem problem_of(const Case& c) {
  kiln::Problem p;
  p.set("B", std::int64_t{c.B});
  p.set("Hq", std::int64_t{c.Hq});
  p.set("Hkv", std::int64_t{c.Hkv});
  p.set("Sq", std::int64_t{c.Sq});
  p.set("Sk", std::int64_t{c.Sk});
  p.set("dtype", std::string(c.dtype));
  p.set("mask", std::string(c.mask));
  p.set("layout", std::string(c.layout));
  return p;
}

// The spaces' tolerances (relative L2): bf16 1e-2, fp16 2e-3, fp32 (log-sum-exp) 1e-4.
inline double tolerance(const std::string& dtype) {
  if (dtype == "bf16") return 1e-2;
  if (dtype == "fp16") return 2e-3;
  return 1e-4;
}

struct Tally {
  int passed = 0;
  int failed = 0;
  int finish() const {
    std::printf("%d passed, %d failed\n", passed, failed);
    return failed == 0 ? 0 : 1;
  }
};

inline bool judge(const std::vector<kiln::CheckResult>& results, std::string& detail) {
  bool ok = true;
  for (const auto& r : results) {
    const bool good = r.unwritten == 0 && r.non_finite == 0 && r.rel_l2 <= tolerance(r.dtype) && r.compared > 0;
    char line[256];
    std::snprintf(line, sizeof line, " %s(%s): rel_l2=%.3g max_abs=%.3g compared=%llu/%llu unwritten=%llu non_finite=%llu%s",
                  r.output.c_str(), r.dtype.c_str(), r.rel_l2, r.max_abs_err, static_cast<unsigned long long>(r.compared),
                  static_cast<unsigned long long>(r.elements), static_cast<unsigned long long>(r.unwritten),
                  static_cast<unsigned long long>(r.non_finite), good ? "" : " <-- FAIL");
    detail += line;
    ok = ok && good;
  }
  return ok;
}

// Runs variant Config on one case twice with different seeds (inputs differ, a stale result
// cannot pass), checking each run.
template <int kHeadDim, class Config>
void run_case(const Case& c, Tally& tally, int repeats = 2) {
  for (int rep = 0; rep < repeats; ++rep) {
    std::string detail;
    bool ok = false;
    std::string what;
    try {
      kiln::attention::Workload<kHeadDim> w(problem_of(c), 1000 + 7919 * rep + c.Sq * 31 + c.Sk);
      what = w.shape().describe();
      w.poison();
      w.template run<Config>(nullptr);
      KILN_CUDA_CHECK(cudaDeviceSynchronize());
      ok = judge(w.check(), detail);
    } catch (const std::exception& e) {
      detail = std::string(" exception: ") + e.what();
    }
    std::printf("%s %s [%s]%s\n", ok ? "ok  " : "FAIL", Config::kiln_name, what.c_str(), detail.c_str());
    (ok ? tally.passed : tally.failed) += 1;
  }
}

}  // namespace attention_test

namespace attention_test {

// Masks, tails (sizes off the tile grid), grouped-query heads, Sq < Sk and Sq > Sk (rows with no
// key), both layouts, both element types, one-row and one-key problems, problems few enough
// blocks to split, decode (one or a few queries, groups of 4 and 8 query heads: packed by
// PACK_GQA variants, split across blocks, a packed block holding rows of several queries under a
// causal mask), and two large problems checked on a GPU-reference sample.
inline std::vector<Case> variant_cases() {
  return {
      {1, 1, 1, 1, 1, "bf16", "full", "bshd"},
      {2, 4, 2, 77, 133, "bf16", "causal", "bhsd"},
      {1, 3, 1, 200, 65, "fp16", "causal", "bshd"},
      {3, 2, 2, 1, 1000, "fp16", "full", "bshd"},
      {1, 2, 1, 64, 1000, "bf16", "causal", "bhsd"},
      {2, 4, 4, 128, 128, "fp16", "causal", "bshd"},
      {1, 8, 8, 256, 256, "bf16", "full", "bhsd"},
      {2, 8, 2, 513, 2049, "fp16", "causal", "bshd"},
      {1, 16, 16, 1024, 1024, "bf16", "full", "bhsd"},
      {2, 8, 2, 1, 1000, "bf16", "full", "bshd"},
      {1, 16, 2, 3, 777, "fp16", "causal", "bhsd"},
      {3, 12, 4, 5, 4099, "bf16", "causal", "bshd"},
      {1, 8, 2, 100, 300, "bf16", "causal", "bshd"},
  };
}

// The key-split path must be exercised: case {3, 2, 2, 1, 1000} splits under any SPLIT_TARGET > 0.
template <class Config>
void check_split_covered(Tally& tally) {
  if (Config::SPLIT_TARGET == 0) return;
  int device = 0, sms = 0;
  KILN_CUDA_CHECK(cudaGetDevice(&device));
  KILN_CUDA_CHECK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device));
  kiln::attention::Shape s = kiln::attention::shape_from_problem(problem_of({3, 2, 2, 1, 1000, "fp16", "full", "bshd"}),
                                                                 Config::HEAD_DIM);
  const auto p = kiln::attention::params_for(s.attention_params(nullptr, nullptr, nullptr, nullptr, nullptr));
  const kiln::attention::SplitPlan plan = kiln::attention::plan_for<Config>(p, sms);
  // A CLUSTER variant must merge its splits in a cluster wherever the device has clusters.
  int major = 0;
  KILN_CUDA_CHECK(cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device));
  const bool want_cluster = kiln::attention::Traits<Config>::kCluster > 0 && major >= 9;
  const bool ok = plan.splits > 1 && plan.cluster == want_cluster;
  std::printf("%s %s splits the keys of a 6-row problem into %d%s\n", ok ? "ok  " : "FAIL", Config::kiln_name,
              plan.splits, plan.cluster ? ", merged in a cluster" : "");
  (ok ? tally.passed : tally.failed) += 1;
}

template <int kHeadDim, class... Configs>
int run_variant_suite() {
  require_device_or_skip();
  Tally tally;
  (check_split_covered<Configs>(tally), ...);
  // ATTN_TEST_QUICK=1 (for runs under compute-sanitizer): the first four cases, one seed each.
  const bool quick = std::getenv("ATTN_TEST_QUICK") != nullptr;
  std::vector<Case> cases = variant_cases();
  if (quick) cases.resize(4);
  for (const Case& c : cases) (run_case<kHeadDim, Configs>(c, tally, quick ? 1 : 2), ...);
  return tally.finish();
}

}  // namespace attention_test
