// CPU tree N-body accelerations (fp32): Barnes-Hut with monopole and quadrupole moments on the
// radix tree of Morton-sorted bodies (nbody_tree_math.hpp), or all-pairs, as the variant says.
//
// Build: bounding box (OpenMP reduction), 63-bit Morton codes, a sort of (code, index) pairs,
// the bodies gathered in that order, the internal nodes (each found on its own, Karras 2012),
// then the moments bottom-up: every body climbs towards the root and the second of a node's two
// children to arrive computes the node (an atomic counter per node), so the climbs run in
// parallel. Walk: OpenMP over the bodies in Morton order (neighbours walk alike and share cached
// nodes); each body walks the tree depth-first, uses an accepted node's moments, sums a node of at
// most LEAF bodies directly, and opens the others.
//
// Config: METHOD (tree | allpairs), THETA (opening angle in hundredths), LEAF, QUAD (0 | 1).
// METHOD allpairs runs the all-pairs kernel (nbody_cpu_kernels.hpp) with kAllPairsCpu, the
// configuration the committed nbody_cpu record gives the largest measured n.
#pragma once
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <vector>

#include "nbody_cpu_kernels.hpp"
#include "nbody_tree_math.hpp"

namespace kiln::nbody {

// The all-pairs configuration of METHOD allpairs (presets/records/cpu/nbody_cpu.record.json).
struct AllPairsCpuConfig {
  static constexpr int VEC = 16, IVECS = 2, JTILE = 256;
  static constexpr const char* kiln_name = "nbody_cpu__VEC16_IVECS2_JTILE256";
};

template <class Config>
struct TreeCpuTraits {
  static constexpr bool kTree = Config::METHOD == "tree";
  static constexpr float kInvTheta = 100.0f / static_cast<float>(Config::THETA);
  static constexpr int kLeaf = Config::LEAF;
  static constexpr bool kQuad = Config::QUAD != 0;
  static_assert(Config::METHOD == "tree" || Config::METHOD == "allpairs", "METHOD: tree or allpairs");
  static_assert(Config::THETA >= 10 && Config::THETA <= 100, "THETA: 0.10 to 1.00, in hundredths");
  static_assert(kLeaf >= 1, "LEAF: at least one body");
  static_assert(Config::QUAD == 0 || Config::QUAD == 1, "QUAD: 0 or 1");
};

// What a walk did: nodes used through their moments, and body-body interactions (direct sums).
struct WalkCounts {
  std::int64_t nodes = 0;
  std::int64_t bodies = 0;
};

// The build's buffers for n bodies; kept by the caller so that repeated calls do not allocate.
class CpuTree {
 public:
  void reserve(std::int64_t n) {
    if (n <= capacity_) return;
    const auto un = static_cast<std::size_t>(n);
    pairs_.resize(un);
    keys_.resize(un);
    sorted_.resize(4 * un);
    links_.resize(un);
    moments_.resize(un);
    boxes_.resize(un);
    parent_.resize(un);
    body_parent_.resize(un);
    arrived_ = std::make_unique<std::atomic<int>[]>(un);
    capacity_ = n;
  }

  // Sorts the bodies and builds the tree with its moments for opening angle 1 / inv_theta.
  void build(const float* bodies, std::int64_t n, float inv_theta);

  // Accelerations of every body (3n floats, in the caller's order).
  template <int kLeaf, bool kQuad, bool kCount>
  void walk(float* acc, std::int64_t n, WalkCounts* counts) const;

  // The last build, for the tests (nbody_tree_invariants.hpp): sorted codes and bodies, the
  // internal nodes' links and moments (vectors of the capacity, the first n or n - 1 in use).
  const std::vector<std::uint64_t>& codes() const { return keys_; }
  const std::vector<float>& sorted() const { return sorted_; }
  const std::vector<tree::Links>& links() const { return links_; }
  const std::vector<tree::Moments>& moments() const { return moments_; }

 private:
  struct Keyed {
    std::uint64_t key;
    std::uint32_t index;
    bool operator<(const Keyed& o) const { return key != o.key ? key < o.key : index < o.index; }
  };

  std::int64_t capacity_ = 0;
  std::vector<Keyed> pairs_;               // (code, original index), sorted
  std::vector<std::uint64_t> keys_;        // the sorted codes alone
  std::vector<float> sorted_;              // the bodies in code order, x y z m
  std::vector<tree::Links> links_;         // internal nodes
  std::vector<tree::Moments> moments_;     // internal nodes
  std::vector<tree::Box> boxes_;           // internal nodes
  std::vector<std::int32_t> parent_;       // internal nodes; -1 for the root
  std::vector<std::int32_t> body_parent_;  // sorted bodies
  std::unique_ptr<std::atomic<int>[]> arrived_;
};

inline void CpuTree::build(const float* bodies, std::int64_t n, float inv_theta) {
  reserve(n);
  float lo0 = bodies[0], lo1 = bodies[1], lo2 = bodies[2], hi0 = lo0, hi1 = lo1, hi2 = lo2;
#pragma omp parallel for reduction(min : lo0, lo1, lo2) reduction(max : hi0, hi1, hi2)
  for (std::int64_t i = 0; i < n; ++i) {
    lo0 = std::min(lo0, bodies[4 * i]);
    lo1 = std::min(lo1, bodies[4 * i + 1]);
    lo2 = std::min(lo2, bodies[4 * i + 2]);
    hi0 = std::max(hi0, bodies[4 * i]);
    hi1 = std::max(hi1, bodies[4 * i + 1]);
    hi2 = std::max(hi2, bodies[4 * i + 2]);
  }
  const tree::Box box{{lo0, lo1, lo2}, {hi0, hi1, hi2}};
  const float scale = tree::morton_scale(box);
#pragma omp parallel for
  for (std::int64_t i = 0; i < n; ++i)
    pairs_[i] = {tree::morton(bodies[4 * i], bodies[4 * i + 1], bodies[4 * i + 2], box, scale),
                 static_cast<std::uint32_t>(i)};
  std::sort(pairs_.begin(), pairs_.begin() + n);

#pragma omp parallel for
  for (std::int64_t s = 0; s < n; ++s) {
    keys_[s] = pairs_[s].key;
    const float* b = bodies + 4 * static_cast<std::int64_t>(pairs_[s].index);
    for (int c = 0; c < 4; ++c) sorted_[4 * s + c] = b[c];
  }
  if (n < 2) return;

  parent_[0] = -1;
#pragma omp parallel for
  for (std::int64_t i = 0; i < n - 1; ++i) {
    const tree::Links l = tree::radix_node(keys_.data(), n, i);
    links_[i] = l;
    arrived_[i].store(0, std::memory_order_relaxed);
    for (std::uint32_t child : {l.left, l.right}) {
      if (child & tree::kBody) body_parent_[child & ~tree::kBody] = static_cast<std::int32_t>(i);
      else parent_[child] = static_cast<std::int32_t>(i);
    }
  }

  // The climbs: the first child to arrive at a node stops, the second computes it (the counter's
  // acquire-release ordering makes the first child's moments visible) and goes on up.
#pragma omp parallel for schedule(static, 1024)
  for (std::int64_t s = 0; s < n; ++s) {
    std::int32_t node = body_parent_[s];
    while (node >= 0) {
      if (arrived_[node].fetch_add(1, std::memory_order_acq_rel) == 0) break;
      tree::Moments m[2];
      tree::Box b[2];
      const tree::Links& l = links_[node];
      const std::uint32_t child[2] = {l.left, l.right};
      for (int k = 0; k < 2; ++k) {
        if (child[k] & tree::kBody) {
          tree::body_moments(sorted_.data() + 4 * static_cast<std::int64_t>(child[k] & ~tree::kBody), m[k], b[k]);
        } else {
          m[k] = moments_[child[k]];
          b[k] = boxes_[child[k]];
        }
      }
      tree::combine(m[0], b[0], m[1], b[1], inv_theta, moments_[node], boxes_[node]);
      node = parent_[node];
    }
  }
}

template <int kLeaf, bool kQuad, bool kCount>
void CpuTree::walk(float* acc, std::int64_t n, WalkCounts* counts) const {
  if (n == 1) {
    acc[0] = acc[1] = acc[2] = 0.0f;  // the softened self-pull is exactly zero
    if constexpr (kCount) counts->bodies += 1;
    return;
  }
  std::int64_t node_total = 0, body_total = 0;
#pragma omp parallel for schedule(dynamic, 256) reduction(+ : node_total, body_total)
  for (std::int64_t s = 0; s < n; ++s) {
    const float* p = sorted_.data() + 4 * s;
    float a[3] = {0.0f, 0.0f, 0.0f};
    std::uint32_t stack[tree::kStackDepth];
    int top = 0;
    stack[top++] = 0;
    while (top > 0) {
      const std::uint32_t node = stack[--top];
      const tree::Moments& m = moments_[node];
      const tree::Links& l = links_[node];
      if (tree::accepts(m, p)) {
        tree::approximate<kQuad>(m, p, a);
        if constexpr (kCount) ++node_total;
      } else if (l.last - l.first < kLeaf) {
        for (std::int32_t k = l.first; k <= l.last; ++k) tree::direct(sorted_.data() + 4 * static_cast<std::int64_t>(k), p, a);
        if constexpr (kCount) body_total += l.last - l.first + 1;
      } else {
        for (std::uint32_t child : {l.left, l.right}) {
          if (child & tree::kBody) {
            tree::direct(sorted_.data() + 4 * static_cast<std::int64_t>(child & ~tree::kBody), p, a);
            if constexpr (kCount) ++body_total;
          } else {
            // Cannot happen (kStackDepth bounds the tree's depth); inside the parallel loop it
            // would end the program with this message.
            if (top == tree::kStackDepth) throw std::logic_error("nbody tree walk: stack overflow");
            stack[top++] = child;
          }
        }
      }
    }
    float* out = acc + 3 * static_cast<std::int64_t>(pairs_[s].index);
    out[0] = a[0];
    out[1] = a[1];
    out[2] = a[2];
  }
  if constexpr (kCount) {
    counts->nodes += node_total;
    counts->bodies += body_total;
  }
}

// Accelerations of n bodies (x, y, z, m each; acc 3n floats) by the variant's method, with
// `tree` holding the build's buffers between calls.
template <class Config>
void tree_accelerations(const float* bodies, float* acc, std::int64_t n, CpuTree& tree) {
  using Tr = TreeCpuTraits<Config>;
  if (n <= 0) return;
  if constexpr (!Tr::kTree) {
    accelerations<AllPairsCpuConfig>(bodies, acc, n);
  } else {
    tree.build(bodies, n, Tr::kInvTheta);
    tree.template walk<Tr::kLeaf, Tr::kQuad, false>(acc, n, nullptr);
  }
}

// The same walk, counting what it does (the floor analysis and the tests).
template <class Config>
WalkCounts tree_interactions(const float* bodies, float* acc, std::int64_t n, CpuTree& tree) {
  using Tr = TreeCpuTraits<Config>;
  WalkCounts counts;
  if (n <= 0) return counts;
  tree.build(bodies, n, Tr::kInvTheta);
  tree.template walk<Tr::kLeaf, Tr::kQuad, true>(acc, n, &counts);
  return counts;
}

}  // namespace kiln::nbody
