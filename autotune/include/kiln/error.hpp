// Kiln's errors: those that cross the boundary between a kernel's workload and the variant
// harness, and those the `kiln` command maps to its exit codes (cli/main.cpp).
#pragma once
#include <stdexcept>
#include <string>

namespace kiln {

// Bad input or misuse: a problem without a dimension the workload needs, a malformed file.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The machine is not fit to measure on (another process on the GPU, another GPU than the device
// file's): nothing was tuned. The `kiln` command exits 3 for it, as `kiln preflight` does.
class RefusedError : public Error {
 public:
  using Error::Error;
};

// The device reported a failure while running a variant (launch failure, illegal address...).
// The harness records it as a "runtime" failure of that variant.
class RuntimeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace kiln
