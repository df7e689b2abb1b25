// Which variant runs a problem: the generated kiln/tuned/attention_d<D>.hpp where the build made
// one (Kiln's measured winner per bucket), else the untuned defaults of attention_untuned.hpp.
// Both are reached through one signature: dispatch(head_dim, problem, launch) calls
// launch(Config{}) with the chosen Config and returns what it returns.
#pragma once
#include "attention_problem.hpp"

#if __has_include("kiln/tuned/attention_d64.hpp")
#include "kiln/tuned/attention_d64.hpp"
#define KILN_ATTENTION_TUNED_D64 1
#endif
#if __has_include("kiln/tuned/attention_d128.hpp")
#include "kiln/tuned/attention_d128.hpp"
#define KILN_ATTENTION_TUNED_D128 1
#endif
#if !defined(KILN_ATTENTION_TUNED_D64) || !defined(KILN_ATTENTION_TUNED_D128)
#include "attention_untuned.hpp"
#endif

namespace kiln::attention {

template <class Launch>
decltype(auto) dispatch_d64(const DispatchProblem& p, Launch&& launch) {
#if defined(KILN_ATTENTION_TUNED_D64)
  return ::kiln::tuned::attention_d64::dispatch(
      ::kiln::tuned::attention_d64::Problem{p.B, p.Hq, p.Hkv, p.Sq, p.Sk, p.dtype, p.mask, p.layout}, launch);
#else
  return untuned::dispatch_d64(p, launch);
#endif
}

template <class Launch>
decltype(auto) dispatch_d128(const DispatchProblem& p, Launch&& launch) {
#if defined(KILN_ATTENTION_TUNED_D128)
  return ::kiln::tuned::attention_d128::dispatch(
      ::kiln::tuned::attention_d128::Problem{p.B, p.Hq, p.Hkv, p.Sq, p.Sk, p.dtype, p.mask, p.layout}, launch);
#else
  return untuned::dispatch_d128(p, launch);
#endif
}

// head_dim is 64 or 128 (checked by the caller).
template <class Launch>
decltype(auto) dispatch(int head_dim, const DispatchProblem& p, Launch&& launch) {
  if (head_dim == 64) return dispatch_d64(p, launch);
  return dispatch_d128(p, launch);
}

}  // namespace kiln::attention
