// The device's multiprocessor count (the split-KV choice depends on it): shared by
// kiln::attention_forward and the benchmark library.
#pragma once
#include <cuda_runtime.h>

#include <atomic>
#include <stdexcept>

namespace kiln::attention {

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
