// The CPU N-body entry point: each problem goes to the variant tuned for its bucket.
#include "kiln/nbody.hpp"
#include "kiln/tuned/nbody_cpu.hpp"
#include "nbody_cpu_kernels.hpp"

namespace kiln::cpu {

void nbody_accelerations(const float* bodies, float* acc, std::int64_t n) {
  kiln::tuned::nbody_cpu::dispatch({n}, [&](auto config) {
    ::kiln::nbody::accelerations<decltype(config)>(bodies, acc, n);
  });
}

}  // namespace kiln::cpu
