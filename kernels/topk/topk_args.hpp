// Argument checks of the public top-k functions (kiln/topk.hpp): each throws kiln::TopkError
// naming the function and the argument, before anything is read or written.
#pragma once
#include <cstdint>
#include <climits>
#include <string>

#include "kiln/topk.hpp"

namespace kiln::topk {

[[noreturn]] inline void reject(const char* function, const std::string& what) {
  throw TopkError(std::string(function) + ": " + what);
}

inline void require_sizes(const char* function, std::int64_t rows, std::int64_t n, std::int64_t k, std::int64_t max_k) {
  if (rows < 0) reject(function, "rows must be >= 0, got " + std::to_string(rows));
  if (n < 1 || n > kTopkMaxN) reject(function, "n must be in 1.." + std::to_string(kTopkMaxN) + ", got " + std::to_string(n));
  if (k < 1 || k > n) reject(function, "k must be in 1..n (n = " + std::to_string(n) + "), got " + std::to_string(k));
  if (rows > 0 && rows > INT64_MAX / n) reject(function, "rows x n overflows 64 bits");
  if (k > max_k) reject(function, "k must be at most " + std::to_string(max_k) + ", got " + std::to_string(k));
}

inline void require_mode(const char* function, TopkMode mode) {
  if (mode != TopkMode::largest && mode != TopkMode::smallest) reject(function, "mode must be largest or smallest");
}

// A pointer that must be set when `count` elements go through it.
inline void require_pointer(const char* function, const char* name, const void* p, std::int64_t count) {
  if (p == nullptr && count > 0) reject(function, std::string(name) + " is null with " + std::to_string(count) + " elements");
}

inline void require_aligned(const char* function, const char* name, const void* p, std::size_t alignment) {
  if (reinterpret_cast<std::uintptr_t>(p) % alignment != 0)
    reject(function, std::string(name) + " must be " + std::to_string(alignment) + "-byte aligned");
}

}  // namespace kiln::topk
