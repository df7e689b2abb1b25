#include <cxxabi.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <vector>

#include "launch_shapes.hpp"

namespace kiln::harness {
namespace {

std::array<std::int64_t, 3> dims(const dim3& d) { return {d.x, d.y, d.z}; }

// The kernel's name as a person writes it ("scale_rows(float*, int)"), from the mangled symbol.
std::string kernel_name(const void* func) {
#if CUDART_VERSION >= 12030
  const char* name = nullptr;
  if (cudaFuncGetName(&name, func) == cudaSuccess && name != nullptr) {
    int status = 0;
    char* plain = abi::__cxa_demangle(name, nullptr, nullptr, &status);
    std::string out = status == 0 && plain != nullptr ? plain : name;
    std::free(plain);
    return out;
  }
  cudaGetLastError();
#endif
  return "";
}

model::LaunchShape shape_of(const cudaKernelNodeParams& p) {
  const unsigned long long ctas = static_cast<unsigned long long>(p.gridDim.x) * p.gridDim.y * p.gridDim.z;
  const unsigned threads = p.blockDim.x * p.blockDim.y * p.blockDim.z;
  model::LaunchShape shape;
  shape.kernel = kernel_name(p.func);
  shape.grid = dims(p.gridDim);
  shape.block = dims(p.blockDim);
  shape.ctas = static_cast<std::int64_t>(ctas);
  shape.threads_per_cta = threads;
  shape.dynamic_shared_bytes = p.sharedMemBytes;
  cudaFuncAttributes attributes{};
  if (cudaFuncGetAttributes(&attributes, p.func) == cudaSuccess) {
    shape.static_shared_bytes = static_cast<std::int64_t>(attributes.sharedSizeBytes);
    shape.registers = attributes.numRegs;
    // Local memory per thread: register spills and local arrays.
    shape.local_bytes = static_cast<std::int64_t>(attributes.localSizeBytes);
  }
  int per_sm = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, p.func, static_cast<int>(threads), p.sharedMemBytes) ==
      cudaSuccess) {
    shape.ctas_per_sm = per_sm;
  }
  cudaGetLastError();
  return shape;
}

}  // namespace

std::optional<std::vector<model::LaunchShape>> capture_launch_shapes(cudaStream_t stream,
                                                                     const std::function<void()>& enqueue) {
  cudaGraph_t graph = nullptr;
  if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeRelaxed) != cudaSuccess) {
    cudaGetLastError();
    return std::nullopt;
  }
  try {
    enqueue();
  } catch (...) {
    // A launch that throws must not leave the stream capturing: every later launch would fail.
    cudaStreamEndCapture(stream, &graph);
    if (graph != nullptr) cudaGraphDestroy(graph);
    cudaGetLastError();
    throw;
  }
  const bool captured = cudaStreamEndCapture(stream, &graph) == cudaSuccess && graph != nullptr;
  std::optional<std::vector<model::LaunchShape>> shapes;
  if (captured) {
    // One stream: the nodes are its launches, in the order cudaGraphGetNodes lists them.
    std::size_t count = 0;
    std::vector<cudaGraphNode_t> nodes;
    if (cudaGraphGetNodes(graph, nullptr, &count) == cudaSuccess) {
      nodes.resize(count);
      if (count == 0 || cudaGraphGetNodes(graph, nodes.data(), &count) == cudaSuccess) {
        shapes.emplace();
        for (cudaGraphNode_t node : nodes) {
          cudaGraphNodeType type{};
          if (cudaGraphNodeGetType(node, &type) != cudaSuccess || type != cudaGraphNodeTypeKernel) continue;
          cudaKernelNodeParams params{};
          if (cudaGraphKernelNodeGetParams(node, &params) != cudaSuccess) {
            shapes.reset();
            break;
          }
          shapes->push_back(shape_of(params));
        }
      }
    }
  }
  if (graph != nullptr) cudaGraphDestroy(graph);
  // A failed capture leaves an error in the runtime's last-error slot that is not the variant's.
  cudaGetLastError();
  return shapes;
}

}  // namespace kiln::harness
