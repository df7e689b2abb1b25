// One benchmark variant per translation unit (so they compile in parallel): a Config and the two
// entry points the C ABI table calls, kiln_bench_launch_<name> and kiln_bench_scratch_<name>.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "attention_config.hpp"
#include "attention_launch.cuh"

#define KILN_BENCH_VARIANT(NAME, D, BM, BN, W, S, QR, ST, PG, CL, WG, OV, PR, PP, PS, KW)                                          \
  namespace kiln_bench_##NAME {                                                                            \
  KILN_ATTENTION_CONFIG_ALL(Config, D, BM, BN, W, S, QR, ST, PG, CL, WG, OV, PR, PP, PS, KW,                                        \
                            "_WGMMA" #WG "_OVERLAP" #OV "_PRODUCER" #PR "_PINGPONG" #PP "_PERSISTENT" #PS "_KEY_WARPS" #KW);      \
  }                                                                                                        \
  cudaError_t kiln_bench_launch_##NAME(const kiln::attention::ForwardParams& p,                            \
                                       kiln::AttentionDType dtype, bool causal, void* scratch,             \
                                       std::size_t scratch_bytes, int sms, cudaStream_t stream) {          \
    return kiln::attention::launch<kiln_bench_##NAME::Config>(p, dtype, causal, scratch, scratch_bytes,    \
                                                              sms, stream);                                \
  }                                                                                                        \
  std::size_t kiln_bench_scratch_##NAME(const kiln::attention::ForwardParams& p, int sms) {                \
    return kiln::attention::scratch_bytes_for<kiln_bench_##NAME::Config>(p, sms);                          \
  }                                                                                                        \
  const char* kiln_bench_name_##NAME() { return kiln_bench_##NAME::Config::kiln_name; }
