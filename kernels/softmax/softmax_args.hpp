// Argument checks of the public softmax functions (kiln/softmax.hpp): each throws
// kiln::SoftmaxError naming the function and the argument, before anything is read or written.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "kiln/softmax.hpp"

namespace kiln::softmax {

[[noreturn]] inline void reject(const char* function, const std::string& what) {
  throw SoftmaxError(std::string(function) + ": " + what);
}

// The checks of one call over `element_bytes`-byte elements; `in_place` says whether in == out is
// accepted (the CPU's kernels read each element before they write it; the CUDA ones are not
// written for it).
inline void require_arguments(const char* function, const void* in, const void* out, std::int64_t rows,
                              std::int64_t cols, std::size_t element_bytes, bool in_place) {
  if (rows < 0) reject(function, "rows must be >= 0, got " + std::to_string(rows));
  if (cols < 0) reject(function, "cols must be >= 0, got " + std::to_string(cols));
  // In bytes, so that the overlap test below cannot wrap around.
  if (cols > 0 && rows > INT64_MAX / static_cast<std::int64_t>(element_bytes) / cols)
    reject(function, "rows x cols x " + std::to_string(element_bytes) + " bytes overflows 63 bits");
  const std::int64_t elements = rows * cols;
  if (elements == 0) return;
  if (in == nullptr) reject(function, "in is null with " + std::to_string(elements) + " elements");
  if (out == nullptr) reject(function, "out is null with " + std::to_string(elements) + " elements");
  const auto in_at = reinterpret_cast<std::uintptr_t>(in);
  const auto out_at = reinterpret_cast<std::uintptr_t>(out);
  if (in_at % element_bytes != 0) reject(function, "in must be " + std::to_string(element_bytes) + "-byte aligned");
  if (out_at % element_bytes != 0) reject(function, "out must be " + std::to_string(element_bytes) + "-byte aligned");
  const auto bytes = static_cast<std::uintptr_t>(elements) * element_bytes;
  const bool overlap = (in_at <= out_at ? out_at - in_at : in_at - out_at) < bytes;
  if (overlap && !(in_place && in_at == out_at)) {
    reject(function, in_place ? "out overlaps in without being in (in place needs out == in)"
                              : "out overlaps in (the CUDA softmax does not compute in place)");
  }
}

}  // namespace kiln::softmax
