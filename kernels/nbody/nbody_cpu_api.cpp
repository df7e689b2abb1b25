// The CPU all-pairs N-body entry point: each problem goes to the variant tuned for its bucket.
#include "kiln/nbody.hpp"
#include "kiln/tuned/nbody_cpu.hpp"
#include "nbody_args.hpp"
#include "nbody_cpu_kernels.hpp"

namespace kiln::cpu {

void nbody_accelerations(const float* bodies, float* acc, std::int64_t n) {
  constexpr const char* kWho = "kiln::cpu::nbody_accelerations";
  ::kiln::nbody::require_count(kWho, n);
  ::kiln::nbody::require_pointer(kWho, "bodies", bodies, n, alignof(float));
  ::kiln::nbody::require_pointer(kWho, "acc", acc, n, alignof(float));
  if (n == 0) return;
  kiln::tuned::nbody_cpu::dispatch({n}, [&](auto config) {
    ::kiln::nbody::accelerations<decltype(config)>(bodies, acc, n);
  });
}

}  // namespace kiln::cpu
