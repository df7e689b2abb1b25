// The public parameters as the kernels take them, and the device's multiprocessor count (the
// split-KV choice depends on it): shared by kiln::attention_forward and the benchmark library.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <stdexcept>

#include "attention_params.cuh"
#include "kiln/attention.hpp"

namespace kiln::attention {

inline ForwardParams to_forward(const AttentionParams& a) {
  ForwardParams p;
  p.q = a.q;
  p.k = a.k;
  p.v = a.v;
  p.o = a.o;
  p.lse = a.lse;
  p.q_batch_stride = a.q_strides.batch;
  p.q_head_stride = a.q_strides.head;
  p.q_seq_stride = a.q_strides.seq;
  p.k_batch_stride = a.k_strides.batch;
  p.k_head_stride = a.k_strides.head;
  p.k_seq_stride = a.k_strides.seq;
  p.v_batch_stride = a.v_strides.batch;
  p.v_head_stride = a.v_strides.head;
  p.v_seq_stride = a.v_strides.seq;
  p.o_batch_stride = a.o_strides.batch;
  p.o_head_stride = a.o_strides.head;
  p.o_seq_stride = a.o_strides.seq;
  p.batch = a.batch;
  p.heads_q = a.heads_q;
  p.heads_kv = a.heads_kv;
  p.seq_q = a.seq_q;
  p.seq_k = a.seq_k;
  p.group = a.heads_q / a.heads_kv;
  p.scale = a.scale;
  p.scale_log2 = a.scale * 1.4426950408889634f;
  return p;
}

// Multiprocessor count of the current device, read once per device.
inline int sm_count() {
  static std::atomic<int> cached[64] = {};
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) throw std::runtime_error("kiln::attention_forward: no CUDA device");
  if (device < 64) {
    const int known = cached[device].load(std::memory_order_relaxed);
    if (known > 0) return known;
  }
  int count = 0;
  if (cudaDeviceGetAttribute(&count, cudaDevAttrMultiProcessorCount, device) != cudaSuccess || count < 1) {
    throw std::runtime_error("kiln::attention_forward: cannot read the multiprocessor count");
  }
  if (device < 64) cached[device].store(count, std::memory_order_relaxed);
  return count;
}

}  // namespace kiln::attention
