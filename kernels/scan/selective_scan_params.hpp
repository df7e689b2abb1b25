// Argument checks of the public selective-scan functions (kiln/selective_scan.hpp), shared by the
// CPU and CUDA entry points, and the typed kernel arguments built from checked parameters.
#pragma once
#include <cstdint>
#include <initializer_list>
#include <string>

#include "kiln/selective_scan.hpp"
#include "selective_scan_args.hpp"

namespace kiln::scan {

inline const char* dtype_name(ScanDType t) {
  switch (t) {
    case ScanDType::fp32: return "fp32";
    case ScanDType::bf16: return "bf16";
    case ScanDType::fp16: return "fp16";
  }
  return "unknown";
}

inline std::int64_t io_bytes(ScanDType t) { return t == ScanDType::fp32 ? 4 : 2; }

// Throws SelectiveScanError("<function>: <what>") for the first argument that is not accepted.
inline void validate(const SelectiveScanParams& p, const char* function) {
  auto reject = [&](const std::string& what) { throw SelectiveScanError(std::string(function) + ": " + what); };
  if (p.dtype != ScanDType::fp32 && p.dtype != ScanDType::bf16 && p.dtype != ScanDType::fp16) {
    reject("dtype must be fp32, bf16 or fp16");
  }
  const struct {
    const char* name;
    std::int64_t value;
  } sizes[] = {{"batch", p.batch}, {"channels", p.channels}, {"length", p.length}};
  for (const auto& s : sizes) {
    if (s.value < 0) reject(std::string(s.name) + " must be >= 0, got " + std::to_string(s.value));
  }
  if (p.state < 1 || p.state > kMaxScanState) {
    reject("state must be 1 .. " + std::to_string(kMaxScanState) + ", got " + std::to_string(p.state));
  }
  if (p.groups < 1) reject("groups must be >= 1, got " + std::to_string(p.groups));
  if (p.channels % p.groups != 0) {
    reject("groups (" + std::to_string(p.groups) + ") must divide channels (" + std::to_string(p.channels) + ")");
  }
  // Every tensor's element count must stay below 2^62, leaving room for index arithmetic.
  auto fits = [](std::initializer_list<std::int64_t> factors) {
    constexpr std::int64_t kLimit = std::int64_t{1} << 62;
    std::int64_t acc = 1;
    for (std::int64_t f : factors) {
      if (f == 0) return true;
      if (acc > kLimit / f) return false;
      acc *= f;
    }
    return true;
  };
  if (!fits({p.batch, p.channels, p.length}) || !fits({p.batch, p.channels, p.state}) ||
      !fits({p.batch, p.groups, p.state, p.length})) {
    reject("the tensors are too large to index (more than 2^62 elements)");
  }
  const std::int64_t io = io_bytes(p.dtype);
  const bool rows = p.batch > 0 && p.channels > 0;    // any (b, d) row at all
  const bool steps = rows && p.length > 0;             // any time step
  auto pointer = [&](const char* name, const void* ptr, bool required, std::int64_t align) {
    if (ptr == nullptr) {
      if (required) reject(std::string(name) + " is null");
      return;
    }
    if (reinterpret_cast<std::uintptr_t>(ptr) % static_cast<std::uintptr_t>(align) != 0) {
      reject(std::string(name) + " must be aligned to its element (" + std::to_string(align) + " bytes)");
    }
  };
  pointer("u", p.u, steps, io);
  pointer("delta", p.delta, steps, io);
  pointer("A", p.A, steps, 4);
  pointer("B", p.B, steps, io);
  pointer("C", p.C, steps, io);
  pointer("y", p.y, steps, io);
  pointer("D", p.D, false, 4);
  pointer("z", p.z, false, io);
  pointer("delta_bias", p.delta_bias, false, 4);
  pointer("final_state", p.final_state, false, 4);
}

template <class T>
ScanArgs<T> args_for(const SelectiveScanParams& p) {
  ScanArgs<T> a;
  a.u = static_cast<const T*>(p.u);
  a.delta = static_cast<const T*>(p.delta);
  a.A = p.A;
  a.B = static_cast<const T*>(p.B);
  a.C = static_cast<const T*>(p.C);
  a.D = p.D;
  a.z = static_cast<const T*>(p.z);
  a.delta_bias = p.delta_bias;
  a.y = static_cast<T*>(p.y);
  a.final_state = p.final_state;
  a.batch = p.batch;
  a.channels = p.channels;
  a.length = p.length;
  a.state = p.state;
  a.groups = p.groups;
  a.softplus = p.softplus;
  return a;
}

}  // namespace kiln::scan
