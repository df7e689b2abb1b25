// The benchmark library's C ABI (attention_bench_capi.h) over kiln::attention_forward and the
// variants listed in bench_variants.inc.
#include "attention_bench_capi.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <string>
#include <vector>

#include "attention_device.hpp"
#include "attention_launch.cuh"
#include "attention_params.cuh"
#include "kiln/attention.hpp"

#define KILN_BENCH_VARIANT(NAME, D, BM, BN, W, S, QR, ST, PG, CL, WG, OV, PR, PP, PS, KW)                                                 \
  cudaError_t kiln_bench_launch_##NAME(const kiln::attention::ForwardParams&, kiln::AttentionDType, bool,  \
                                       void*, std::size_t, int, cudaStream_t);                             \
  std::size_t kiln_bench_scratch_##NAME(const kiln::attention::ForwardParams&, int);                       \
  const char* kiln_bench_name_##NAME();
#include "bench_variants.inc"
#undef KILN_BENCH_VARIANT

namespace {

struct Variant {
  int head_dim;
  cudaError_t (*launch)(const kiln::attention::ForwardParams&, kiln::AttentionDType, bool, void*, std::size_t,
                        int, cudaStream_t);
  std::size_t (*scratch)(const kiln::attention::ForwardParams&, int);
  const char* (*name)();
};

const Variant kVariants[] = {
#define KILN_BENCH_VARIANT(NAME, D, BM, BN, W, S, QR, ST, PG, CL, WG, OV, PR, PP, PS, KW)\
  {D, kiln_bench_launch_##NAME, kiln_bench_scratch_##NAME, kiln_bench_name_##NAME},
#include "bench_variants.inc"
#undef KILN_BENCH_VARIANT
};
constexpr int kVariantCount = sizeof(kVariants) / sizeof(kVariants[0]);

thread_local std::string last_error;

kiln::AttentionParams to_params(const KilnAttentionCall& c) {
  kiln::AttentionParams p;
  p.q = c.q;
  p.k = c.k;
  p.v = c.v;
  p.o = c.o;
  p.lse = c.lse;
  p.dtype = c.dtype == 0 ? kiln::AttentionDType::bf16 : kiln::AttentionDType::fp16;
  p.batch = c.batch;
  p.heads_q = c.heads_q;
  p.heads_kv = c.heads_kv;
  p.seq_q = c.seq_q;
  p.seq_k = c.seq_k;
  p.head_dim = c.head_dim;
  p.q_strides = {c.q_strides[0], c.q_strides[1], c.q_strides[2]};
  p.k_strides = {c.k_strides[0], c.k_strides[1], c.k_strides[2]};
  p.v_strides = {c.v_strides[0], c.v_strides[1], c.v_strides[2]};
  p.o_strides = {c.o_strides[0], c.o_strides[1], c.o_strides[2]};
  p.causal = c.causal != 0;
  p.scale = c.scale;
  p.workspace = c.workspace;
  p.workspace_bytes = c.workspace_bytes;
  return p;
}

using kiln::attention::sm_count;

bool valid_variant(int index, const KilnAttentionCall* call) {
  if (index < 0 || index >= kVariantCount) {
    last_error = "no variant " + std::to_string(index);
    return false;
  }
  if (call != nullptr && call->head_dim != kVariants[index].head_dim) {
    last_error = "variant " + std::string(kVariants[index].name()) + " is for another head_dim";
    return false;
  }
  return true;
}

}  // namespace

extern "C" {

int kiln_attention_bench_forward(const KilnAttentionCall* call, void* stream) {
  try {
    kiln::attention_forward(to_params(*call), static_cast<cudaStream_t>(stream));
    return 0;
  } catch (const std::exception& e) {
    last_error = e.what();
    return 1;
  }
}

size_t kiln_attention_bench_workspace_bytes(const KilnAttentionCall* call) {
  try {
    return kiln::attention_workspace_bytes(to_params(*call));
  } catch (const std::exception& e) {
    last_error = e.what();
    return 0;
  }
}

const char* kiln_attention_bench_dispatched(const KilnAttentionCall* call) {
  try {
    return kiln::attention_variant_name(to_params(*call));
  } catch (const std::exception& e) {
    last_error = e.what();
    return "";
  }
}

int kiln_attention_bench_variant_count(void) { return kVariantCount; }

const char* kiln_attention_bench_variant_name(int index) {
  return valid_variant(index, nullptr) ? kVariants[index].name() : "";
}

int kiln_attention_bench_variant_head_dim(int index) {
  return valid_variant(index, nullptr) ? kVariants[index].head_dim : 0;
}

// Checks the arguments as the public entry does (same messages), then launches the variant.
int kiln_attention_bench_forward_variant(int index, const KilnAttentionCall* call, void* stream) {
  if (!valid_variant(index, call)) return 1;
  try {
    (void)kiln::attention_workspace_bytes(to_params(*call));  // validation only
  } catch (const std::exception& e) {
    last_error = e.what();
    return 1;
  }
  const kiln::AttentionParams params = to_params(*call);
  const cudaError_t status =
      kVariants[index].launch(kiln::attention::params_for(params), params.dtype, params.causal, params.workspace,
                              params.workspace_bytes, sm_count(), static_cast<cudaStream_t>(stream));
  if (status != cudaSuccess) {
    last_error = std::string("launch failed: ") + cudaGetErrorString(status);
    return 1;
  }
  return 0;
}

size_t kiln_attention_bench_variant_workspace_bytes(int index, const KilnAttentionCall* call) {
  if (!valid_variant(index, call)) return 0;
  return kVariants[index].scratch(kiln::attention::params_for(to_params(*call)), sm_count());
}

namespace {

__global__ void empty_kernel() {}

}  // namespace

// One call from the host with events around it, the device idle before it (synchronised), as a
// caller sees it: the median of `reps` device-side times, and of the host time the call took.
// index >= 0: that variant; -1: the public call (dispatched variant); -2: an empty kernel launched
// the same way, the floor of this measurement on this machine (launch cost, no work).
int kiln_attention_bench_latency(int index, const KilnAttentionCall* call, void* stream, int reps, double* device_us,
                                 double* host_us) {
  if (index >= 0 && !valid_variant(index, call)) return 1;
  cudaStream_t s = static_cast<cudaStream_t>(stream);
  auto one_call = [&]() -> int {
    if (index == -2) {
      empty_kernel<<<1, 32, 0, s>>>();
      return cudaGetLastError() == cudaSuccess ? 0 : 1;
    }
    return index < 0 ? kiln_attention_bench_forward(call, stream) : kiln_attention_bench_forward_variant(index, call, stream);
  };
  cudaEvent_t start, stop;
  if (cudaEventCreate(&start) != cudaSuccess || cudaEventCreate(&stop) != cudaSuccess) {
    last_error = "cudaEventCreate failed";
    return 1;
  }
  std::vector<double> dev, host;
  int rc = 0;
  for (int r = 0; r < reps + 1 && rc == 0; ++r) {  // the first call warms up and is not counted
    cudaDeviceSynchronize();
    cudaEventRecord(start, s);
    const auto t0 = std::chrono::steady_clock::now();
    rc = one_call();
    const auto t1 = std::chrono::steady_clock::now();
    cudaEventRecord(stop, s);
    cudaEventSynchronize(stop);
    float ms = 0.f;
    cudaEventElapsedTime(&ms, start, stop);
    if (r > 0) {
      dev.push_back(ms * 1e3);
      host.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
    }
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (rc != 0) return rc;
  std::sort(dev.begin(), dev.end());
  std::sort(host.begin(), host.end());
  *device_us = dev[dev.size() / 2];
  *host_us = host[host.size() / 2];
  return 0;
}

const char* kiln_attention_bench_error(void) { return last_error.c_str(); }

}  // extern "C"
