// The launch shape of a variant's run on the GPU, read without a profiler: the run is captured
// once into a CUDA graph (no kernel executes), and each kernel node gives its grid, block and
// dynamic shared memory; the runtime adds each kernel's registers, static shared and local
// memory, and how many of its CTAs fit on one SM. Kernels keep launching with <<<>>>: nothing in
// their code changes. A run that cannot be captured (it synchronises, or copies to the host) has
// no shape; the harness reports that instead of guessing.
#pragma once
#include <cuda_runtime.h>

#include <functional>
#include <optional>
#include <vector>

#include "kiln/model/protocol.hpp"

namespace kiln::harness {

// One shape per kernel launch of `enqueue` on `stream`, in launch order, or nothing when the
// launches could not be captured. `enqueue` may run only while capturing.
std::optional<std::vector<model::LaunchShape>> capture_launch_shapes(cudaStream_t stream,
                                                                     const std::function<void()>& enqueue);

}  // namespace kiln::harness
