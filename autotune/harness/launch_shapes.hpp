// The launch shape of a variant's run on the GPU, read without a profiler: the run is captured
// once into a CUDA graph (no kernel executes), and each kernel node gives its grid, block and
// dynamic shared memory; the runtime adds each kernel's registers, static shared and local
// memory, and how many of its CTAs fit on one SM. Kernels keep launching with <<<>>>: nothing in
// their code changes. A run that cannot be captured (it synchronises, or copies to the host) has
// no shape; the harness reports that instead of guessing.
#pragma once
#include <cuda_runtime.h>

#include <functional>

#include <nlohmann/json.hpp>

namespace kiln::harness {

// One object per kernel launch of `enqueue` on `stream`, in launch order:
//   {"kernel", "grid": [x, y, z], "block": [x, y, z], "ctas", "threads_per_cta",
//    "dynamic_shared_bytes", "static_shared_bytes", "registers", "local_bytes", "ctas_per_sm"}
// or null when the launches could not be captured. `enqueue` may run only while capturing.
nlohmann::json capture_launch_shapes(cudaStream_t stream, const std::function<void()>& enqueue);

}  // namespace kiln::harness
