// The CUDA warp walk's decisions on the host (nbody_tree_cuda_kernels.cuh, WALK warp), over a
// CpuTree build: the bodies are split into walk groups, and each group walks the tree once for
// the bounding box of its bodies, every body of the group doing the group's interactions. It
// gives, without a GPU, the error the warp walk's decisions make and the work of each group, which
// is the time one warp runs: the tests hold the groups to it, and the README's figures come from
// it.
//
// Two groupings: `nodes`, the CUDA walk's (tree::groups_of_node: nodes of at most kGroup bodies
// whose parent has more), and `runs`, runs of kGroup bodies adjacent in Morton order, the grouping
// the CUDA walk had before, kept to show what it costs.
#pragma once
#include <algorithm>
#include <cstdint>
#include <stdexcept>
#include <vector>

#include "nbody_tree_cpu_kernels.hpp"
#include "nbody_tree_math.hpp"

namespace kiln::nbody {

enum class Grouping { nodes, runs };

// The walk groups of a built tree of n >= 2 bodies, in sorted order of their first bodies.
inline std::vector<tree::Group> walk_groups(const std::vector<tree::Links>& links, std::int64_t n, Grouping grouping) {
  std::vector<tree::Group> groups;
  if (grouping == Grouping::runs) {
    for (std::int64_t first = 0; first < n; first += tree::kGroup)
      groups.push_back({static_cast<std::int32_t>(first), static_cast<std::int32_t>(std::min<std::int64_t>(tree::kGroup, n - first))});
    return groups;
  }
  std::vector<std::int32_t> parent(static_cast<std::size_t>(n - 1), -1);
  for (std::int64_t i = 0; i < n - 1; ++i) {
    for (const std::uint32_t child : {links[i].left, links[i].right}) {
      if (!(child & tree::kBody)) parent[child] = static_cast<std::int32_t>(i);
    }
  }
  for (std::int64_t i = 0; i < n - 1; ++i) {
    tree::Group g[2];
    const int count = tree::groups_of_node(links.data(), parent.data(), i, g);
    groups.insert(groups.end(), g, g + count);
  }
  std::sort(groups.begin(), groups.end(), [](const tree::Group& a, const tree::Group& b) { return a.first < b.first; });
  return groups;
}

// What the groups' walks did: interactions of one body of a group (node interactions plus bodies
// summed directly; every body of the group does as many), their mean and maximum over the groups,
// and the mean number of bodies in a group (the busy lanes of a warp).
struct GroupWalkStats {
  std::int64_t groups = 0;
  double mean_work = 0.0;
  std::int64_t max_work = 0;
  double mean_bodies = 0.0;
};

// Walks every group of `groups` (which must partition the n sorted bodies) as the CUDA warp walk
// does, writing the accelerations in sorted order (acc_sorted, 3n floats).
template <int kLeaf, bool kQuad>
GroupWalkStats group_walk(const CpuTree& tree, std::int64_t n, const std::vector<tree::Group>& groups,
                          float* acc_sorted) {
  const float* sorted = tree.sorted().data();
  const tree::Links* links = tree.links().data();
  const tree::Moments* moments = tree.moments().data();
  const auto ng = static_cast<std::int64_t>(groups.size());
  std::vector<std::int64_t> work(groups.size());
#pragma omp parallel for schedule(dynamic, 16)
  for (std::int64_t g = 0; g < ng; ++g) {
    const tree::Group group = groups[g];
    tree::Box box;
    for (int a = 0; a < 3; ++a) box.lo[a] = box.hi[a] = sorted[4 * group.first + a];
    for (std::int32_t s = group.first; s < group.first + group.count; ++s) {
      for (int a = 0; a < 3; ++a) {
        box.lo[a] = std::min(box.lo[a], sorted[4 * s + a]);
        box.hi[a] = std::max(box.hi[a], sorted[4 * s + a]);
      }
    }
    for (std::int32_t s = group.first; s < group.first + group.count; ++s) {
      const float* p = sorted + 4 * static_cast<std::int64_t>(s);
      float a[3] = {0.0f, 0.0f, 0.0f};
      std::int64_t done = 0;
      std::uint32_t stack[tree::kStackDepth];
      int top = 0;
      stack[top++] = 0;
      while (top > 0) {
        const std::uint32_t node = stack[--top];
        const tree::Moments& m = moments[node];
        const tree::Links& l = links[node];
        if (tree::accepts_box(m, box)) {
          tree::approximate<kQuad>(m, p, a);
          ++done;
        } else if (l.last - l.first < kLeaf) {
          for (std::int32_t k = l.first; k <= l.last; ++k) tree::direct(sorted + 4 * static_cast<std::int64_t>(k), p, a);
          done += l.last - l.first + 1;
        } else {
          for (const std::uint32_t child : {l.left, l.right}) {
            if (child & tree::kBody) {
              tree::direct(sorted + 4 * static_cast<std::int64_t>(child & ~tree::kBody), p, a);
              ++done;
            } else {
              // Cannot happen (kStackDepth bounds the depth); inside the parallel loop it would end
              // the program with this message.
              if (top == tree::kStackDepth) throw std::logic_error("nbody tree group walk: stack overflow");
              stack[top++] = child;
            }
          }
        }
      }
      for (int c = 0; c < 3; ++c) acc_sorted[3 * static_cast<std::int64_t>(s) + c] = a[c];
      work[g] = done;  // the same for every body of the group: the decisions are the group's
    }
  }
  GroupWalkStats stats;
  stats.groups = ng;
  if (ng == 0) return stats;
  double sum = 0.0;
  for (const std::int64_t w : work) {
    sum += static_cast<double>(w);
    stats.max_work = std::max(stats.max_work, w);
  }
  stats.mean_work = sum / static_cast<double>(ng);
  stats.mean_bodies = static_cast<double>(n) / static_cast<double>(ng);
  return stats;
}

}  // namespace kiln::nbody
