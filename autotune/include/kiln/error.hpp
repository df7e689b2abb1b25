// Errors that cross the boundary between a kernel's workload and the variant harness.
#pragma once
#include <stdexcept>
#include <string>

namespace kiln {

// Bad input or misuse: a problem without a dimension the workload needs, a malformed file.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// The device reported a failure while running a variant (launch failure, illegal address...).
// The harness records it as a "runtime" failure of that variant.
class RuntimeError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

}  // namespace kiln
