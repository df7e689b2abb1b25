// Variants used where the build has no tuned header for a head dimension: one per bucket of the
// spaces (same bucket rules), picked from the H200 measurements in README.md, and restricted to
// tiles that fit every supported device (at most 99 KB of shared memory, the L4's limit). A Kiln
// build replaces these with the winners it measured on its own GPU.
#pragma once
#include "attention_config.hpp"
#include "attention_problem.hpp"

namespace kiln::attention::untuned {

enum class Bucket { tiny, few_rows, causal, full };

// The spaces' buckets, in order: the first that holds.
inline Bucket bucket_of(const DispatchProblem& p) {
  if (p.B * p.Hq * p.Sq * p.Sk <= 4194304) return Bucket::tiny;
  if (p.B * p.Hq * p.Sq <= 65536) return Bucket::few_rows;
  if (p.mask == "causal") return Bucket::causal;
  return Bucket::full;
}

//                    name           D    BM   BN  W  S  Q  SPLIT
KILN_ATTENTION_CONFIG(D64Tiny,       64,  64, 128, 4, 2, 1, 2);  // one 128-key tile, more blocks
KILN_ATTENTION_CONFIG(D64FewRows,    64,  64,  64, 4, 2, 0, 2);
KILN_ATTENTION_CONFIG(D64Long,       64, 128,  64, 4, 2, 1, 2);  // causal and full alike
KILN_ATTENTION_CONFIG(D128Small,    128,  64,  64, 4, 2, 1, 2);  // tiny and few_rows
KILN_ATTENTION_CONFIG(D128Long,     128, 128,  32, 4, 4, 0, 2);  // causal and full alike

template <class Launch>
decltype(auto) dispatch_d64(const DispatchProblem& p, Launch&& launch) {
  switch (bucket_of(p)) {
    case Bucket::tiny:
      return launch(D64Tiny{});
    case Bucket::few_rows:
      return launch(D64FewRows{});
    default:
      return launch(D64Long{});
  }
}

template <class Launch>
decltype(auto) dispatch_d128(const DispatchProblem& p, Launch&& launch) {
  switch (bucket_of(p)) {
    case Bucket::tiny:
    case Bucket::few_rows:
      return launch(D128Small{});
    default:
      return launch(D128Long{});
  }
}

}  // namespace kiln::attention::untuned
