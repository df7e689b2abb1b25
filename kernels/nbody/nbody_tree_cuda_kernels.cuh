// CUDA tree N-body accelerations (fp32): Barnes-Hut with monopole and quadrupole moments on the
// radix tree of Morton-sorted bodies (nbody_tree_math.hpp, shared with the CPU code), or
// all-pairs, as the variant says.
//
// One call is seven steps (eight with WALK warp) on `stream`, every temporary in the caller's
// workspace:
//  1. partial bounding boxes (kBoxBlocks blocks over the bodies);
//  2. Morton codes: each block first reduces the partial boxes, then codes its bodies;
//  3. cub::DeviceRadixSort::SortPairs of (code, index) over the 63 code bits. CUB's onesweep sort
//     is the fastest radix sort on current GPUs and ships with the toolkit; a hand-written one
//     would be slower and another thing to get right;
//  4. the bodies gathered in code order;
//  5. the internal nodes, one thread each (Karras 2012), with the parent links;
//  6. the moments, bottom-up: a thread per body climbs towards the root; the second child to
//     arrive at a node (an atomic counter) computes it, reading its children from L2;
//  6b. WALK warp: the walk groups, the nodes of at most 32 bodies whose parent has more
//     (tree::groups_of_node), listed through an atomic counter;
//  7. the walk: WALK warp (a warp takes groups from a counter; a group's bodies share one stack
//     in shared memory and one opening decision, taken for the bounding box of their positions,
//     as in Bonsai) or WALK body (a stack per thread, over the bodies in Morton order).
//
// Config: METHOD (tree | allpairs), WALK (warp | body), THREADS (walk block size), THETA (opening
// angle in hundredths), LEAF, QUAD (0 | 1). METHOD allpairs launches the all-pairs kernel
// (nbody_cuda_kernels.cuh) with AllPairsCudaConfig.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cub/device/device_radix_sort.cuh>

#include "nbody_cuda_kernels.cuh"
#include "nbody_tree_math.hpp"

namespace kiln::nbody {

// The all-pairs configuration of METHOD allpairs: the committed H200 record's choice for
// 23433 <= n <= 77220 (presets/records/h200/nbody_cuda.record.json), the range where the tree
// starts to compete; it needs no thread-block cluster, so it also runs on sm_89.
struct AllPairsCudaConfig {
  static constexpr int THREADS = 512, BODIES = 1, JSPLIT = 16, UNROLL = 8, CLUSTER = 1;
  static constexpr const char* kiln_name = "nbody_cuda__THREADS512_BODIES1_JSPLIT16_UNROLL8_CLUSTER1";
};

template <class Config>
struct TreeCudaTraits {
  static constexpr bool kTree = Config::METHOD == "tree";
  static constexpr bool kWarpWalk = Config::WALK == "warp";
  static constexpr int kThreads = Config::THREADS;
  static constexpr float kInvTheta = 100.0f / static_cast<float>(Config::THETA);
  static constexpr int kLeaf = Config::LEAF;
  static constexpr bool kQuad = Config::QUAD != 0;
  static_assert(Config::METHOD == "tree" || Config::METHOD == "allpairs", "METHOD: tree or allpairs");
  static_assert(Config::WALK == "warp" || Config::WALK == "body", "WALK: warp or body");
  static_assert(kThreads % 32 == 0 && kThreads >= 32 && kThreads <= 1024, "THREADS: whole warps, at most 1024");
  static_assert(Config::THETA >= 10 && Config::THETA <= 100, "THETA: 0.10 to 1.00, in hundredths");
  static_assert(kLeaf >= 1, "LEAF: at least one body");
  static_assert(Config::QUAD == 0 || Config::QUAD == 1, "QUAD: 0 or 1");
};

namespace tree_cuda {

inline constexpr int kBoxBlocks = 256;    // blocks of step 1; step 2's blocks have this many threads
inline constexpr int kBuildThreads = 256;
inline constexpr unsigned kCodeBlocks = 1024;  // blocks of step 2 at most (grid-stride beyond)
// The workspace's counters: the number of walk groups, and the next group a warp takes.
inline constexpr int kCounters = 2, kGroupCount = 0, kNextGroup = 1;

// Where each array lives in the workspace (byte offsets, each 256-byte aligned).
struct Layout {
  std::size_t partials, keys_in, keys_out, index_in, index_out, sorted, links, moments, boxes, parent, body_parent,
      arrived, groups, counters, sort_temp, sort_temp_bytes, total;
};

inline std::size_t align256(std::size_t x) { return (x + 255) / 256 * 256; }

// The sort's temporary storage for n pairs (CUB queries the current device).
inline cudaError_t sort_temp_bytes(std::int64_t n, std::size_t& bytes) {
  bytes = 0;
  return cub::DeviceRadixSort::SortPairs(nullptr, bytes, static_cast<const std::uint64_t*>(nullptr),
                                         static_cast<std::uint64_t*>(nullptr), static_cast<const std::uint32_t*>(nullptr),
                                         static_cast<std::uint32_t*>(nullptr), static_cast<int>(n), 0, 63);
}

inline Layout layout(std::int64_t n, std::size_t sort_bytes) {
  const auto un = static_cast<std::size_t>(n);
  Layout l{};
  std::size_t at = 0;
  auto take = [&](std::size_t bytes) {
    const std::size_t here = at;
    at += align256(bytes);
    return here;
  };
  l.partials = take(kBoxBlocks * sizeof(tree::Box));
  l.keys_in = take(un * sizeof(std::uint64_t));
  l.keys_out = take(un * sizeof(std::uint64_t));
  l.index_in = take(un * sizeof(std::uint32_t));
  l.index_out = take(un * sizeof(std::uint32_t));
  l.sorted = take(un * sizeof(float4));
  l.links = take(un * sizeof(tree::Links));
  l.moments = take(un * sizeof(tree::Moments));
  l.boxes = take(un * sizeof(tree::Box));
  l.parent = take(un * sizeof(std::int32_t));
  l.body_parent = take(un * sizeof(std::int32_t));
  l.arrived = take(un * sizeof(std::int32_t));
  l.groups = take(un * sizeof(tree::Group));
  l.counters = take(kCounters * sizeof(std::int32_t));
  l.sort_temp = take(sort_bytes);
  l.sort_temp_bytes = sort_bytes;
  l.total = at;
  return l;
}

// Workspace bytes of the tree for n bodies.
inline cudaError_t workspace_bytes(std::int64_t n, std::size_t& bytes) {
  std::size_t sort_bytes = 0;
  const cudaError_t status = sort_temp_bytes(n, sort_bytes);
  bytes = status == cudaSuccess ? layout(n, sort_bytes).total : 0;
  return status;
}

__device__ __forceinline__ tree::Box box_union(tree::Box a, const tree::Box& b) {
#pragma unroll
  for (int k = 0; k < 3; ++k) {
    a.lo[k] = fminf(a.lo[k], b.lo[k]);
    a.hi[k] = fmaxf(a.hi[k], b.hi[k]);
  }
  return a;
}

__device__ __forceinline__ tree::Box warp_box(tree::Box b) {
#pragma unroll
  for (int offset = 16; offset > 0; offset /= 2) {
    tree::Box other;
#pragma unroll
    for (int k = 0; k < 3; ++k) {
      other.lo[k] = __shfl_xor_sync(0xFFFFFFFFu, b.lo[k], offset);
      other.hi[k] = __shfl_xor_sync(0xFFFFFFFFu, b.hi[k], offset);
    }
    b = box_union(b, other);
  }
  return b;
}

// The union of every thread's box, in every thread (blockDim.x == kThreads, whole warps).
template <int kThreads>
__device__ tree::Box block_box(tree::Box b) {
  __shared__ tree::Box warps[kThreads / 32];
  b = warp_box(b);
  if (threadIdx.x % 32 == 0) warps[threadIdx.x / 32] = b;
  __syncthreads();
  b = warps[0];
  for (int w = 1; w < kThreads / 32; ++w) b = box_union(b, warps[w]);
  __syncthreads();
  return b;
}

__device__ __forceinline__ tree::Box empty_box() {
  tree::Box b;
#pragma unroll
  for (int k = 0; k < 3; ++k) {
    b.lo[k] = INFINITY;
    b.hi[k] = -INFINITY;
  }
  return b;
}

// Step 1: block b's box of the bodies it strides over.
template <class Tr>
__global__ void __launch_bounds__(kBuildThreads) box_kernel(const float4* __restrict__ bodies, int n, tree::Box* partials) {
  tree::Box b = empty_box();
  for (int i = blockIdx.x * kBuildThreads + threadIdx.x; i < n; i += gridDim.x * kBuildThreads) {
    const float4 p = bodies[i];
    const tree::Box one{{p.x, p.y, p.z}, {p.x, p.y, p.z}};
    b = box_union(b, one);
  }
  b = block_box<kBuildThreads>(b);
  if (threadIdx.x == 0) partials[blockIdx.x] = b;
}

// Step 2: the whole box from the partials, then the codes and the identity permutation.
template <class Tr>
__global__ void __launch_bounds__(kBoxBlocks) morton_kernel(const float4* __restrict__ bodies, int n,
                                                            const tree::Box* __restrict__ partials,
                                                            std::uint64_t* keys, std::uint32_t* index) {
  const tree::Box box = block_box<kBoxBlocks>(partials[threadIdx.x]);
  const float scale = tree::morton_scale(box);
  for (int i = blockIdx.x * kBoxBlocks + threadIdx.x; i < n; i += gridDim.x * kBoxBlocks) {
    const float4 p = bodies[i];
    keys[i] = tree::morton(p.x, p.y, p.z, box, scale);
    index[i] = static_cast<std::uint32_t>(i);
  }
}

// Step 4.
template <class Tr>
__global__ void gather_kernel(const float4* __restrict__ bodies, const std::uint32_t* __restrict__ index, int n,
                              float4* sorted) {
  for (int s = blockIdx.x * blockDim.x + threadIdx.x; s < n; s += gridDim.x * blockDim.x) sorted[s] = bodies[index[s]];
}

// Step 5: internal node i, its children's parent links, and its arrival counter reset.
template <class Tr>
__global__ void links_kernel(const std::uint64_t* __restrict__ keys, int n, tree::Links* links, std::int32_t* parent,
                             std::int32_t* body_parent, std::int32_t* arrived) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n - 1; i += gridDim.x * blockDim.x) {
    const tree::Links l = tree::radix_node(keys, n, i);
    links[i] = l;
    arrived[i] = 0;
    if (i == 0) parent[0] = -1;
    const std::uint32_t child[2] = {l.left, l.right};
#pragma unroll
    for (int k = 0; k < 2; ++k) {
      if (child[k] & tree::kBody) body_parent[child[k] & ~tree::kBody] = i;
      else parent[child[k]] = i;
    }
  }
}

// Moments from their three 16-byte words, however they were loaded.
__device__ __forceinline__ tree::Moments moments_of(float4 a, float4 b, float4 c) {
  tree::Moments r;
  r.com[0] = a.x;
  r.com[1] = a.y;
  r.com[2] = a.z;
  r.mass = a.w;
  r.qxx = b.x;
  r.qyy = b.y;
  r.qzz = b.z;
  r.qxy = b.w;
  r.qxz = c.x;
  r.qyz = c.y;
  r.rcrit2 = c.z;
  r.unused = c.w;
  return r;
}

// Through L2 only: the bottom-up pass reads children another block has just written.
__device__ __forceinline__ tree::Moments load_moments_l2(const tree::Moments* m) {
  const float4* v = reinterpret_cast<const float4*>(m);
  return moments_of(__ldcg(v), __ldcg(v + 1), __ldcg(v + 2));
}

// Through the read-only path: the walk reads moments that no longer change.
__device__ __forceinline__ tree::Moments load_moments(const tree::Moments* m) {
  const float4* v = reinterpret_cast<const float4*>(m);
  return moments_of(__ldg(v), __ldg(v + 1), __ldg(v + 2));
}

__device__ __forceinline__ tree::Links load_links(const tree::Links* l) {
  const uint4 v = __ldg(reinterpret_cast<const uint4*>(l));
  return {v.x, v.y, static_cast<std::int32_t>(v.z), static_cast<std::int32_t>(v.w)};
}

// Step 6. Before signalling a node's counter a thread makes its writes (the child it computed)
// visible device-wide, one fence per node climbed (Karras 2012); the thread that arrives second
// issues its reads only after its atomic has returned (they depend on its result) and reads the
// children through L2 (__ldcg), never from a stale L1 line. A second fence after the atomic, as
// before, doubled the fences: the kernel's stalls were on them (ncu: Stall Membar).
template <class Tr>
__global__ void moments_kernel(const float4* __restrict__ sorted, const tree::Links* __restrict__ links,
                               const std::int32_t* __restrict__ parent, const std::int32_t* __restrict__ body_parent,
                               int n, tree::Moments* moments, tree::Box* boxes, std::int32_t* arrived) {
  for (int s = blockIdx.x * blockDim.x + threadIdx.x; s < n; s += gridDim.x * blockDim.x) {
    std::int32_t node = body_parent[s];
    while (node >= 0) {
      __threadfence();  // releases the node this thread computed last (nothing on the first step)
      if (atomicAdd(arrived + node, 1) == 0) break;
      const tree::Links l = links[node];
      const std::uint32_t child[2] = {l.left, l.right};
      tree::Moments m[2];
      tree::Box b[2];
#pragma unroll
      for (int k = 0; k < 2; ++k) {
        if (child[k] & tree::kBody) {
          const float4 p = sorted[child[k] & ~tree::kBody];
          const float body[4] = {p.x, p.y, p.z, p.w};
          tree::body_moments(body, m[k], b[k]);
        } else {
          m[k] = load_moments_l2(moments + child[k]);
          const float* bb = reinterpret_cast<const float*>(boxes + child[k]);
#pragma unroll
          for (int a = 0; a < 3; ++a) {
            b[k].lo[a] = __ldcg(bb + a);
            b[k].hi[a] = __ldcg(bb + 3 + a);
          }
        }
      }
      tree::combine(m[0], b[0], m[1], b[1], Tr::kInvTheta, moments[node], boxes[node]);
      node = parent[node];
    }
  }
}

__device__ __forceinline__ void direct_body(const float4* __restrict__ sorted, std::int64_t k, const float* p, float* a) {
  const float4 q = __ldg(sorted + k);
  const float b[4] = {q.x, q.y, q.z, q.w};
  tree::direct(b, p, a);
}

__device__ __forceinline__ void store_acc(float* acc, std::uint32_t i, const float* a) {
  float* out = acc + 3 * static_cast<std::int64_t>(i);
  out[0] = a[0];
  out[1] = a[1];
  out[2] = a[2];
}

// Step 7, WALK body: one sorted body per thread, its own stack (local memory).
template <class Tr>
__global__ void __launch_bounds__(Tr::kThreads)
    walk_body_kernel(const float4* __restrict__ sorted, const tree::Links* __restrict__ links,
                     const tree::Moments* __restrict__ moments, const std::uint32_t* __restrict__ index, int n,
                     float* __restrict__ acc) {
  const int s = blockIdx.x * Tr::kThreads + threadIdx.x;
  if (s >= n) return;
  const float4 b = sorted[s];
  const float p[3] = {b.x, b.y, b.z};
  float a[3] = {0.0f, 0.0f, 0.0f};
  std::uint32_t stack[tree::kStackDepth];
  int top = 0;
  stack[top++] = 0;
  while (top > 0) {
    const std::uint32_t node = stack[--top];
    const tree::Moments m = load_moments(moments + node);
    const tree::Links l = load_links(links + node);
    if (tree::accepts(m, p)) {
      tree::approximate<Tr::kQuad>(m, p, a);
    } else if (l.last - l.first < Tr::kLeaf) {
      for (std::int32_t k = l.first; k <= l.last; ++k) direct_body(sorted, k, p, a);
    } else {
      const std::uint32_t child[2] = {l.left, l.right};
#pragma unroll
      for (int c = 0; c < 2; ++c) {
        if (child[c] & tree::kBody) {
          direct_body(sorted, child[c] & ~tree::kBody, p, a);
        } else {
          if (top == tree::kStackDepth) __trap();  // cannot happen: kStackDepth bounds the depth
          stack[top++] = child[c];
        }
      }
    }
  }
  store_acc(acc, index[s], a);
}

// Step 6b: the walk groups (tree::groups_of_node), appended in any order to `groups`; their
// number in counters[kGroupCount], zeroed before the launch. The order only decides which warp
// takes which group, never a result.
template <class Tr>
__global__ void groups_kernel(const tree::Links* __restrict__ links, const std::int32_t* __restrict__ parent, int n,
                              tree::Group* groups, std::int32_t* counters) {
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n - 1; i += gridDim.x * blockDim.x) {
    tree::Group g[2];
    const int count = tree::groups_of_node(links, parent, i, g);
    if (count == 0) continue;
    const int at = atomicAdd(counters + kGroupCount, count);
    for (int k = 0; k < count; ++k) groups[at + k] = g[k];
  }
}

// The pull of the bodies [first, last] of a leaf on each lane's body: each lane loads one body
// of a 32-body chunk (consecutive sorted bodies: one coalesced load), and the chunk is broadcast
// by shuffles, rather than every lane loading every body.
__device__ __forceinline__ void direct_leaf(const float4* __restrict__ sorted, std::int32_t first, std::int32_t last,
                                            int lane, const float* p, float* a) {
  for (std::int32_t base = first; base <= last; base += 32) {
    const int count = min(32, last - base + 1);
    const float4 mine = lane < count ? __ldg(sorted + base + lane) : make_float4(0.0f, 0.0f, 0.0f, 0.0f);
    for (int j = 0; j < count; ++j) {
      const float b[4] = {__shfl_sync(0xFFFFFFFFu, mine.x, j), __shfl_sync(0xFFFFFFFFu, mine.y, j),
                          __shfl_sync(0xFFFFFFFFu, mine.z, j), __shfl_sync(0xFFFFFFFFu, mine.w, j)};
      tree::direct(b, p, a);
    }
  }
}

// Step 7, WALK warp: a warp takes walk groups (step 6b) one at a time from a counter until none
// is left, so the long walks do not make a tail behind a static assignment. The group's bodies
// (at most 32, one per lane) share a stack in shared memory and every decision, taken for the
// bounding box of their positions, as in Bonsai; the control flow is uniform across the warp,
// lane 0 writes the stack, and __syncwarp orders its writes against the other lanes' reads.
template <class Tr>
__global__ void __launch_bounds__(Tr::kThreads)
    walk_warp_kernel(const float4* __restrict__ sorted, const tree::Links* __restrict__ links,
                     const tree::Moments* __restrict__ moments, const std::uint32_t* __restrict__ index,
                     const tree::Group* __restrict__ groups, std::int32_t* counters, float* __restrict__ acc) {
  constexpr int kWarps = Tr::kThreads / 32;
  __shared__ std::uint32_t stacks[kWarps][tree::kStackDepth];
  const int lane = threadIdx.x % 32, warp = threadIdx.x / 32;
  std::uint32_t* stack = stacks[warp];
  const int group_count = __ldcg(counters + kGroupCount);
  for (;;) {
    int g = 0;
    if (lane == 0) g = atomicAdd(counters + kNextGroup, 1);
    g = __shfl_sync(0xFFFFFFFFu, g, 0);
    if (g >= group_count) return;  // the whole warp
    const tree::Group group = groups[g];
    const bool real = lane < group.count;
    // Lanes past the group's bodies take its first body's place: inside its box, results dropped.
    const int s = group.first + (real ? lane : 0);
    const float4 b = sorted[s];
    const float p[3] = {b.x, b.y, b.z};
    const tree::Box box = warp_box(tree::Box{{p[0], p[1], p[2]}, {p[0], p[1], p[2]}});
    float a[3] = {0.0f, 0.0f, 0.0f};
    if (lane == 0) stack[0] = 0;
    int top = 1;
    __syncwarp();
    while (top > 0) {
      const std::uint32_t node = stack[--top];
      __syncwarp();  // every lane has read the slot before lane 0 reuses it
      const tree::Moments m = load_moments(moments + node);
      const tree::Links l = load_links(links + node);
      if (tree::accepts_box(m, box)) {
        tree::approximate<Tr::kQuad>(m, p, a);
      } else if (l.last - l.first < Tr::kLeaf) {
        direct_leaf(sorted, l.first, l.last, lane, p, a);
      } else {
        const std::uint32_t child[2] = {l.left, l.right};
#pragma unroll
        for (int c = 0; c < 2; ++c) {
          if (child[c] & tree::kBody) {
            direct_body(sorted, child[c] & ~tree::kBody, p, a);
          } else {
            if (top == tree::kStackDepth) __trap();  // cannot happen: kStackDepth bounds the depth
            if (lane == 0) stack[top] = child[c];
            ++top;
          }
        }
        __syncwarp();
      }
    }
    if (real) store_acc(acc, index[s], a);
  }
}

inline unsigned grid_of(std::int64_t items, int threads) {
  const std::int64_t blocks = (items + threads - 1) / threads;
  return static_cast<unsigned>(blocks < 65535 * 16 ? (blocks > 0 ? blocks : 1) : 65535 * 16);
}

}  // namespace tree_cuda

inline constexpr std::int64_t kMaxTreeCudaBodies = tree::kMaxTreeBodies;

// Workspace bytes tree_launch needs for n bodies (every Config; queries the current device).
inline cudaError_t tree_workspace_bytes(std::int64_t n, std::size_t& bytes) {
  if (n < 0 || n > kMaxTreeCudaBodies) return cudaErrorInvalidValue;
  return tree_cuda::workspace_bytes(n, bytes);
}

// Enqueues the accelerations of n bodies on `stream` (device pointers: bodies n float4, acc 3n
// floats; workspace 256-byte aligned, at least tree_workspace_bytes(n) bytes). Returns the first
// failing status, cudaErrorInvalidValue for a bad size or too small a workspace.
template <class Config>
cudaError_t tree_launch(const float4* bodies, float* acc, std::int64_t n, void* workspace, std::size_t workspace_bytes,
                        cudaStream_t stream) {
  using Tr = TreeCudaTraits<Config>;
  namespace tc = tree_cuda;
  if (n < 0 || n > kMaxTreeCudaBodies) return cudaErrorInvalidValue;
  if (n == 0) return cudaSuccess;
  if constexpr (!Tr::kTree) {
    return launch<AllPairsCudaConfig>(bodies, acc, n, stream);
  } else {
    if (n == 1) return cudaMemsetAsync(acc, 0, 3 * sizeof(float), stream);  // the self-pull is zero
    std::size_t sort_bytes = 0;
    cudaError_t status = tc::sort_temp_bytes(n, sort_bytes);
    if (status != cudaSuccess) return status;
    const tc::Layout l = tc::layout(n, sort_bytes);
    if (workspace == nullptr || workspace_bytes < l.total) return cudaErrorInvalidValue;
    auto* base = static_cast<unsigned char*>(workspace);
    auto* partials = reinterpret_cast<tree::Box*>(base + l.partials);
    auto* keys_in = reinterpret_cast<std::uint64_t*>(base + l.keys_in);
    auto* keys_out = reinterpret_cast<std::uint64_t*>(base + l.keys_out);
    auto* index_in = reinterpret_cast<std::uint32_t*>(base + l.index_in);
    auto* index_out = reinterpret_cast<std::uint32_t*>(base + l.index_out);
    auto* sorted = reinterpret_cast<float4*>(base + l.sorted);
    auto* links = reinterpret_cast<tree::Links*>(base + l.links);
    auto* moments = reinterpret_cast<tree::Moments*>(base + l.moments);
    auto* boxes = reinterpret_cast<tree::Box*>(base + l.boxes);
    auto* parent = reinterpret_cast<std::int32_t*>(base + l.parent);
    auto* body_parent = reinterpret_cast<std::int32_t*>(base + l.body_parent);
    auto* arrived = reinterpret_cast<std::int32_t*>(base + l.arrived);
    auto* groups = reinterpret_cast<tree::Group*>(base + l.groups);
    auto* counters = reinterpret_cast<std::int32_t*>(base + l.counters);
    const int ni = static_cast<int>(n);

    tc::box_kernel<Tr><<<tc::kBoxBlocks, tc::kBuildThreads, 0, stream>>>(bodies, ni, partials);
    // Each block of step 2 reduces all kBoxBlocks partial boxes first: at most kCodeBlocks blocks.
    const unsigned code_blocks = std::min(tc::grid_of(n, tc::kBoxBlocks), tc::kCodeBlocks);
    tc::morton_kernel<Tr><<<code_blocks, tc::kBoxBlocks, 0, stream>>>(bodies, ni, partials, keys_in, index_in);
    if ((status = cudaGetLastError()) != cudaSuccess) return status;
    std::size_t temp_bytes = l.sort_temp_bytes;
    status = cub::DeviceRadixSort::SortPairs(base + l.sort_temp, temp_bytes, keys_in, keys_out, index_in, index_out, ni,
                                             0, 63, stream);
    if (status != cudaSuccess) return status;
    tc::gather_kernel<Tr><<<tc::grid_of(n, tc::kBuildThreads), tc::kBuildThreads, 0, stream>>>(bodies, index_out, ni,
                                                                                              sorted);
    tc::links_kernel<Tr><<<tc::grid_of(n - 1, tc::kBuildThreads), tc::kBuildThreads, 0, stream>>>(
        keys_out, ni, links, parent, body_parent, arrived);
    tc::moments_kernel<Tr><<<tc::grid_of(n, tc::kBuildThreads), tc::kBuildThreads, 0, stream>>>(
        sorted, links, parent, body_parent, ni, moments, boxes, arrived);
    if constexpr (Tr::kWarpWalk) {
      if ((status = cudaMemsetAsync(counters, 0, tc::kCounters * sizeof(std::int32_t), stream)) != cudaSuccess)
        return status;
      tc::groups_kernel<Tr><<<tc::grid_of(n - 1, tc::kBuildThreads), tc::kBuildThreads, 0, stream>>>(
          links, parent, ni, groups, counters);
      // As many warps as the densest grouping (32 bodies each) could use; warps that find no
      // group left return at once.
      tc::walk_warp_kernel<Tr><<<static_cast<unsigned>((n + Tr::kThreads - 1) / Tr::kThreads), Tr::kThreads, 0, stream>>>(
          sorted, links, moments, index_out, groups, counters, acc);
    } else {
      tc::walk_body_kernel<Tr><<<static_cast<unsigned>((n + Tr::kThreads - 1) / Tr::kThreads), Tr::kThreads, 0, stream>>>(
          sorted, links, moments, index_out, ni, acc);
    }
    return cudaGetLastError();
  }
}

}  // namespace kiln::nbody
