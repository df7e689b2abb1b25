// One benchmark variant per translation unit (so they compile in parallel): a Config and the two
// entry points the C ABI table calls, kiln_bench_launch_<name> and kiln_bench_scratch_<name>.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "attention_config.hpp"
#include "attention_launch.cuh"

// AR = 1 adds ALWAYS_RESCALE (rescale O on every key tile) for A/B measurements, MB > 1 adds
// MIN_BLOCKS; either shows in the name (suffix _ALWAYS_RESCALE1, _MIN_BLOCKS<MB>).
#define KILN_BENCH_VARIANT(NAME, D, BM, BN, W, S, QR, ST, AR, MB)                                              \
  namespace kiln_bench_##NAME {                                                                            \
  KILN_ATTENTION_CONFIG(Base, D, BM, BN, W, S, QR, ST);                                                    \
  struct Config : Base {                                                                                   \
    static constexpr int ALWAYS_RESCALE = AR;                                                              \
    static constexpr int MIN_BLOCKS = MB;                                                                  \
    static constexpr const char* kiln_name =                                                               \
        AR   ? "attention_d" #D "__HEAD_DIM" #D "_BLOCK_M" #BM "_BLOCK_N" #BN "_WARPS" #W "_STAGES" #S       \
               "_Q_IN_REGS" #QR "_SPLIT_TARGET" #ST "_ALWAYS_RESCALE1"                                        \
        : MB > 1 ? "attention_d" #D "__HEAD_DIM" #D "_BLOCK_M" #BM "_BLOCK_N" #BN "_WARPS" #W "_STAGES" #S     \
               "_Q_IN_REGS" #QR "_SPLIT_TARGET" #ST "_MIN_BLOCKS" #MB                                         \
               : Base::kiln_name;                                                                          \
  };                                                                                                       \
  }                                                                                                        \
  cudaError_t kiln_bench_launch_##NAME(const kiln::attention::ForwardParams& p,                            \
                                       kiln::attention::ElementType element, bool causal, void* scratch,   \
                                       std::size_t scratch_bytes, int sms, cudaStream_t stream) {          \
    return kiln::attention::launch<kiln_bench_##NAME::Config>(p, element, causal, scratch, scratch_bytes,  \
                                                              sms, stream);                                \
  }                                                                                                        \
  std::size_t kiln_bench_scratch_##NAME(const kiln::attention::ForwardParams& p, int sms) {                \
    return kiln::attention::scratch_bytes_for<kiln_bench_##NAME::Config>(p, sms);                          \
  }                                                                                                        \
  const char* kiln_bench_name_##NAME() { return kiln_bench_##NAME::Config::kiln_name; }
