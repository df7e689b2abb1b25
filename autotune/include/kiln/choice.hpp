// A parameter whose values are plain identifiers (e.g. "FAULT": ["none", "crash"]) reaches the
// kernel as a kiln::Choice, comparable with string literals in `if constexpr` on host and device.
#pragma once

#if defined(__CUDACC__)
#define KILN_HOST_DEVICE __host__ __device__
#else
#define KILN_HOST_DEVICE
#endif

namespace kiln {

struct Choice {
  const char* value;

  KILN_HOST_DEVICE constexpr bool operator==(const char* other) const {
    const char* a = value;
    while (*a != '\0' && *a == *other) {
      ++a;
      ++other;
    }
    return *a == *other;
  }
  KILN_HOST_DEVICE constexpr bool operator!=(const char* other) const { return !(*this == other); }
  KILN_HOST_DEVICE constexpr bool operator==(Choice other) const { return *this == other.value; }
  KILN_HOST_DEVICE constexpr bool operator!=(Choice other) const { return !(*this == other.value); }
};

}  // namespace kiln
