// The invariants of a built tree (nbody_tree_math.hpp), checked on the host: the tests run it on
// the CPU build and on a GPU build downloaded from its workspace.
#pragma once
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "nbody_tree_math.hpp"

namespace kiln::nbody::tree {

// The first violation found, or "" when there is none:
//  - the sorted codes do not decrease;
//  - every internal node's children are valid, their ranges are adjacent and make up its own,
//    and every body and internal node is reached exactly once from the root;
//  - every internal node's mass is the sum of its range's masses, its centre of mass lies in the
//    range's bounding box and matches the mass-weighted mean (relative to the box size), and its
//    r_crit^2 is at least (box's longest edge / theta)^2.
// sorted: 4n floats in code order; links and moments: n - 1 internal nodes.
inline std::string invariants(const std::vector<std::uint64_t>& codes, const std::vector<float>& sorted,
                              const std::vector<Links>& links, const std::vector<Moments>& moments, std::int64_t n,
                              float inv_theta) {
  auto at = [](const char* what, std::int64_t i) { return std::string(what) + " at node " + std::to_string(i); };
  for (std::int64_t s = 1; s < n; ++s) {
    if (codes[s] < codes[s - 1]) return "codes decrease at body " + std::to_string(s);
  }
  if (n < 2) return "";
  std::vector<int> seen_body(static_cast<std::size_t>(n), 0), seen_node(static_cast<std::size_t>(n - 1), 0);
  std::vector<std::int64_t> stack{0};
  seen_node[0] = 1;
  if (links[0].first != 0 || links[0].last != n - 1) return "the root does not span every body";
  while (!stack.empty()) {
    const std::int64_t i = stack.back();
    stack.pop_back();
    const Links& l = links[i];
    std::int64_t child_first[2], child_last[2];
    const std::uint32_t child[2] = {l.left, l.right};
    for (int k = 0; k < 2; ++k) {
      const std::int64_t c = child[k] & ~kBody;
      if (child[k] & kBody) {
        if (c >= n) return at("a body child out of range", i);
        if (seen_body[c]++) return at("a body reached twice", i);
        child_first[k] = child_last[k] = c;
      } else {
        if (c >= n - 1 || c == 0) return at("an internal child out of range", i);
        if (seen_node[c]++) return at("an internal node reached twice", i);
        child_first[k] = links[c].first;
        child_last[k] = links[c].last;
        stack.push_back(c);
      }
    }
    if (child_first[0] != l.first || child_last[0] + 1 != child_first[1] || child_last[1] != l.last)
      return at("children's ranges do not make up the node's", i);

    double mass = 0, cx = 0, cy = 0, cz = 0;
    float lo[3] = {INFINITY, INFINITY, INFINITY}, hi[3] = {-INFINITY, -INFINITY, -INFINITY};
    for (std::int64_t s = l.first; s <= l.last; ++s) {
      const float* b = sorted.data() + 4 * s;
      mass += b[3];
      cx += static_cast<double>(b[3]) * b[0];
      cy += static_cast<double>(b[3]) * b[1];
      cz += static_cast<double>(b[3]) * b[2];
      for (int a = 0; a < 3; ++a) {
        lo[a] = std::fmin(lo[a], b[a]);
        hi[a] = std::fmax(hi[a], b[a]);
      }
    }
    const Moments& m = moments[i];
    if (std::fabs(m.mass - mass) > 1e-4 * mass) return at("mass is not the sum of its bodies'", i);
    float size = 0.0f;
    for (int a = 0; a < 3; ++a) size = std::fmax(size, hi[a] - lo[a]);
    const double want[3] = {cx / mass, cy / mass, cz / mass};
    for (int a = 0; a < 3; ++a) {
      const double slack = 1e-4 * (size + std::fabs(want[a]));
      if (m.com[a] < lo[a] - slack || m.com[a] > hi[a] + slack) return at("centre of mass outside the box", i);
      if (std::fabs(m.com[a] - want[a]) > slack) return at("centre of mass is not the weighted mean", i);
    }
    const float rcrit = size * inv_theta;
    if (m.rcrit2 < rcrit * rcrit * (1.0f - 1e-5f)) return at("r_crit below the box's edge over theta", i);
  }
  for (std::int64_t s = 0; s < n; ++s) {
    if (!seen_body[s]) return "body " + std::to_string(s) + " is in no node";
  }
  for (std::int64_t i = 0; i < n - 1; ++i) {
    if (!seen_node[i]) return at("unreached", i);
  }
  return "";
}

}  // namespace kiln::nbody::tree
