// The CPU N-body entry point with a tolerance: the tolerance picks the family member (its bucket),
// the member's tuned dispatch over n picks all-pairs or the tree and its configuration.
#include "kiln/nbody.hpp"
#include "kiln/tuned/nbody_tree_cpu.hpp"
#include "nbody_args.hpp"
#include "nbody_tree_cpu_kernels.hpp"

namespace kiln::cpu {

void nbody_accelerations(const float* bodies, float* acc, std::int64_t n, double tolerance) {
  constexpr const char* kWho = "kiln::cpu::nbody_accelerations";
  ::kiln::nbody::require_count(kWho, n);
  ::kiln::nbody::require_pointer(kWho, "bodies", bodies, n, alignof(float));
  ::kiln::nbody::require_pointer(kWho, "acc", acc, n, alignof(float));
  const int digits = ::kiln::nbody::tolerance_digits(kWho, tolerance);
  if (n == 0) return;
  if (digits == 0) {
    nbody_accelerations(bodies, acc, n);  // stricter than every tuned bucket
    return;
  }
  ::kiln::nbody::CpuTree tree;
  kiln::tuned::nbody_tree_cpu::dispatch(digits, {n, kiln::Choice{"plummer"}}, [&](auto config) {
    ::kiln::nbody::tree_accelerations<decltype(config)>(bodies, acc, n, tree);
  });
}

}  // namespace kiln::cpu
