// The pieces of the tree N-body that the CPU and the CUDA code share, host and device alike:
// Morton codes, the binary radix tree of sorted codes (Karras 2012), the moments of a node from
// its two children, the opening test and the two kinds of interaction.
//
// The tree: n bodies sorted by a 63-bit Morton code (21 bits per axis of a cube around the
// bounding box) are the leaves; internal node i (0 <= i < n - 1) spans the sorted bodies
// [first, last] and has two children, each an internal node or a single body (kBody flag). Node 0
// is the root. Every node's common code prefix is longer than its parent's (equal codes are told
// apart by their index), so a path from the root has at most 63 + 32 internal nodes.
//
// Moments of a node, about its centre of mass c: the mass M and the traceless quadrupole
//   Q_ij = sum_k m_k (3 x_i x_j - |x|^2 delta_ij),  x = p_k - c.
// A body at p is pulled by an accepted node as by the potential -M/r - (1/2) d.Q.d / r^5 with
// d = c - p, softened like the all-pairs kernel (r^2 = |d|^2 + eps^2):
//   a = M d / r^3 - Q d / r^5 + (5/2) (d.Q.d) d / r^7.
// The opening test is Barnes' (1994): a node is accepted for a body at distance |c - p| when that
// distance exceeds r_crit = l / theta + delta, l the longest edge of the node's bounding box and
// delta the distance of c from the box's centre. For theta < 2 / sqrt(3) a body inside a node's box
// never accepts that node.
#pragma once
#include <cmath>
#include <cstdint>

#include "kiln/choice.hpp"  // KILN_HOST_DEVICE
#include "nbody_softening.hpp"

namespace kiln::nbody::tree {

// A child index with this bit set is the sorted body (index & ~kBody), otherwise an internal node.
inline constexpr std::uint32_t kBody = 0x80000000u;
// Longest root-to-node path (63 code bits plus 32 index bits of tie-break) plus one: what a
// depth-first walk that pushes both children of a node needs at most on its stack.
inline constexpr int kStackDepth = 97;
// Bodies the tree indexes (child indices keep the top bit for kBody).
inline constexpr std::int64_t kMaxTreeBodies = std::int64_t{1} << 30;

struct Box {
  float lo[3], hi[3];
};

// The internal nodes' links: children (kBody-flagged for bodies) and the sorted range.
struct Links {
  std::uint32_t left, right;
  std::int32_t first, last;
};

// The moments and the opening radius of a node, 48 bytes: three 16-byte loads on the GPU.
struct alignas(16) Moments {
  float com[3], mass;
  float qxx, qyy, qzz, qxy, qxz, qyz;
  float rcrit2;
  float unused;
};

KILN_HOST_DEVICE inline std::uint64_t spread21(std::uint64_t v) {
  v &= 0x1FFFFFull;
  v = (v | v << 32) & 0x1F00000000FFFFull;
  v = (v | v << 16) & 0x1F0000FF0000FFull;
  v = (v | v << 8) & 0x100F00F00F00F00Full;
  v = (v | v << 4) & 0x10C30C30C30C30C3ull;
  v = (v | v << 2) & 0x1249249249249249ull;
  return v;
}

// The scale that maps the box's longest edge onto 21 bits: cells are cubes.
KILN_HOST_DEVICE inline float morton_scale(const Box& box) {
  float extent = box.hi[0] - box.lo[0];
  extent = fmaxf(extent, box.hi[1] - box.lo[1]);
  extent = fmaxf(extent, box.hi[2] - box.lo[2]);
  return extent > 0.0f ? 2097151.0f / extent : 0.0f;
}

KILN_HOST_DEVICE inline std::uint64_t morton(float x, float y, float z, const Box& box, float scale) {
  const float q[3] = {(x - box.lo[0]) * scale, (y - box.lo[1]) * scale, (z - box.lo[2]) * scale};
  std::uint64_t c[3];
  for (int a = 0; a < 3; ++a) c[a] = static_cast<std::uint64_t>(fminf(fmaxf(q[a], 0.0f), 2097151.0f));
  return spread21(c[0]) << 2 | spread21(c[1]) << 1 | spread21(c[2]);
}

KILN_HOST_DEVICE inline int clz64(std::uint64_t x) {
#if defined(__CUDA_ARCH__)
  return __clzll(static_cast<long long>(x));
#else
  return x == 0 ? 64 : __builtin_clzll(x);
#endif
}

KILN_HOST_DEVICE inline int clz32(std::uint32_t x) {
#if defined(__CUDA_ARCH__)
  return __clz(static_cast<int>(x));
#else
  return x == 0 ? 32 : __builtin_clz(x);
#endif
}

// Common prefix length of sorted keys i and j, equal keys told apart by their index; -1 when j
// is outside [0, n).
KILN_HOST_DEVICE inline int prefix(const std::uint64_t* keys, std::int64_t n, std::int64_t i, std::int64_t j) {
  if (j < 0 || j >= n) return -1;
  const std::uint64_t a = keys[i], b = keys[j];
  if (a != b) return clz64(a ^ b);
  return 64 + clz32(static_cast<std::uint32_t>(i) ^ static_cast<std::uint32_t>(j));
}

// Internal node i of the radix tree over n >= 2 sorted keys (Karras 2012, figure 4).
KILN_HOST_DEVICE inline Links radix_node(const std::uint64_t* keys, std::int64_t n, std::int64_t i) {
  const int d = prefix(keys, n, i, i + 1) > prefix(keys, n, i, i - 1) ? 1 : -1;
  const int dmin = prefix(keys, n, i, i - d);
  std::int64_t lmax = 2;
  while (prefix(keys, n, i, i + lmax * d) > dmin) lmax *= 2;
  std::int64_t l = 0;
  for (std::int64_t t = lmax / 2; t >= 1; t /= 2) {
    if (prefix(keys, n, i, i + (l + t) * d) > dmin) l += t;
  }
  const std::int64_t j = i + l * d;
  const int dnode = prefix(keys, n, i, j);
  std::int64_t s = 0;
  std::int64_t t = l;
  do {
    t = (t + 1) / 2;
    if (prefix(keys, n, i, i + (s + t) * d) > dnode) s += t;
  } while (t > 1);
  const std::int64_t split = i + s * d + (d < 0 ? -1 : 0);
  const std::int64_t first = i < j ? i : j;
  const std::int64_t last = i < j ? j : i;
  Links links;
  links.left = static_cast<std::uint32_t>(split) | (first == split ? kBody : 0u);
  links.right = static_cast<std::uint32_t>(split + 1) | (last == split + 1 ? kBody : 0u);
  links.first = static_cast<std::int32_t>(first);
  links.last = static_cast<std::int32_t>(last);
  return links;
}

// A single body as a node: its position and mass, no quadrupole, a box of zero size.
KILN_HOST_DEVICE inline void body_moments(const float* b, Moments& m, Box& box) {
  for (int a = 0; a < 3; ++a) {
    m.com[a] = b[a];
    box.lo[a] = box.hi[a] = b[a];
  }
  m.mass = b[3];
  m.qxx = m.qyy = m.qzz = m.qxy = m.qxz = m.qyz = 0.0f;
  m.rcrit2 = 0.0f;
}

// The node made of children x and y: mass, centre of mass, the quadrupole shifted to it (the
// parallel-axis terms m (3 s s^T - |s|^2 I), s = c_child - c), box and opening radius for 1/theta.
KILN_HOST_DEVICE inline void combine(const Moments& x, const Box& bx, const Moments& y, const Box& by,
                                     float inv_theta, Moments& m, Box& box) {
  m.mass = x.mass + y.mass;
  for (int a = 0; a < 3; ++a) {
    box.lo[a] = fminf(bx.lo[a], by.lo[a]);
    box.hi[a] = fmaxf(bx.hi[a], by.hi[a]);
    m.com[a] = m.mass > 0.0f ? (x.mass * x.com[a] + y.mass * y.com[a]) / m.mass : 0.5f * (box.lo[a] + box.hi[a]);
  }
  m.qxx = x.qxx + y.qxx;
  m.qyy = x.qyy + y.qyy;
  m.qzz = x.qzz + y.qzz;
  m.qxy = x.qxy + y.qxy;
  m.qxz = x.qxz + y.qxz;
  m.qyz = x.qyz + y.qyz;
  const Moments* child[2] = {&x, &y};
  for (const Moments* c : child) {
    const float sx = c->com[0] - m.com[0], sy = c->com[1] - m.com[1], sz = c->com[2] - m.com[2];
    const float s2 = sx * sx + sy * sy + sz * sz;
    m.qxx += c->mass * (3.0f * sx * sx - s2);
    m.qyy += c->mass * (3.0f * sy * sy - s2);
    m.qzz += c->mass * (3.0f * sz * sz - s2);
    m.qxy += c->mass * 3.0f * sx * sy;
    m.qxz += c->mass * 3.0f * sx * sz;
    m.qyz += c->mass * 3.0f * sy * sz;
  }
  float size = 0.0f, delta2 = 0.0f;
  for (int a = 0; a < 3; ++a) {
    size = fmaxf(size, box.hi[a] - box.lo[a]);
    const float off = m.com[a] - 0.5f * (box.lo[a] + box.hi[a]);
    delta2 += off * off;
  }
  const float rcrit = size * inv_theta + sqrtf(delta2);
  m.rcrit2 = rcrit * rcrit;
}

// 1/sqrt(x) for x >= eps^2: correctly rounded division on the host; on the GPU rsqrt.approx
// (2 ulp; never subnormal here, so flushing is harmless), as the all-pairs kernel uses.
KILN_HOST_DEVICE inline float inv_sqrt(float x) {
#if defined(__CUDA_ARCH__)
  float y;
  asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(y) : "f"(x));
  return y;
#else
  return 1.0f / std::sqrt(x);
#endif
}

// The pull of body (x, y, z, m) on a body at p, as the all-pairs kernels compute it.
KILN_HOST_DEVICE inline void direct(const float* b, const float* p, float* acc) {
  const float dx = b[0] - p[0], dy = b[1] - p[1], dz = b[2] - p[2];
  const float r2 = dx * dx + dy * dy + dz * dz + kSoftening2;
  const float inv = inv_sqrt(r2);
  const float s = b[3] * inv * inv * inv;
  acc[0] += dx * s;
  acc[1] += dy * s;
  acc[2] += dz * s;
}

// The pull of an accepted node on a body at p: monopole, plus the quadrupole when kQuad.
template <bool kQuad>
KILN_HOST_DEVICE inline void approximate(const Moments& m, const float* p, float* acc) {
  const float dx = m.com[0] - p[0], dy = m.com[1] - p[1], dz = m.com[2] - p[2];
  const float r2 = dx * dx + dy * dy + dz * dz + kSoftening2;
  const float inv = inv_sqrt(r2);
  const float inv2 = inv * inv;
  const float inv3 = inv * inv2;
  if constexpr (kQuad) {
    const float qx = m.qxx * dx + m.qxy * dy + m.qxz * dz;
    const float qy = m.qxy * dx + m.qyy * dy + m.qyz * dz;
    const float qz = m.qxz * dx + m.qyz * dy + m.qzz * dz;
    const float dqd = qx * dx + qy * dy + qz * dz;
    const float inv5 = inv3 * inv2;
    const float radial = m.mass * inv3 + 2.5f * dqd * inv5 * inv2;
    acc[0] += dx * radial - qx * inv5;
    acc[1] += dy * radial - qy * inv5;
    acc[2] += dz * radial - qz * inv5;
  } else {
    const float s = m.mass * inv3;
    acc[0] += dx * s;
    acc[1] += dy * s;
    acc[2] += dz * s;
  }
}

// Walk groups: the bodies that walk the tree together on the GPU, one warp each, sharing every
// opening decision (taken for the group's bounding box). A group is a node of at most kGroup
// bodies whose parent has more (the root when n <= kGroup), or a single body whose parent has
// more. These nodes partition the sorted bodies, and a node's bodies share a code prefix, so they
// lie in one Morton cell and their box is tight. Runs of kGroup bodies adjacent in Morton order
// are not: where the curve jumps (between cells, across the sparse halo of a Plummer sphere) such
// a run can span the system, its box contains the dense core, and its walk opens nearly every
// node.
inline constexpr int kGroup = 32;

struct Group {
  std::int32_t first, count;  // sorted bodies [first, first + count)
};

// The groups internal node i (n >= 2) contributes, 0, 1 or 2 of them, written to out; returns
// their number. Every body is in exactly one group over all internal nodes.
KILN_HOST_DEVICE inline int groups_of_node(const Links* links, const std::int32_t* parent, std::int64_t i,
                                           Group* out) {
  const Links l = links[i];
  const std::int32_t size = l.last - l.first + 1;
  if (size <= kGroup) {
    const std::int32_t up = parent[i];
    if (up >= 0 && links[up].last - links[up].first + 1 <= kGroup) return 0;
    out[0] = {l.first, size};
    return 1;
  }
  const std::uint32_t child[2] = {l.left, l.right};
  int count = 0;
  for (int c = 0; c < 2; ++c) {
    if (child[c] & kBody) out[count++] = {static_cast<std::int32_t>(child[c] & ~kBody), 1};
  }
  return count;
}

// True when the node may be used whole for a body at p (distance to its centre of mass beyond
// r_crit).
KILN_HOST_DEVICE inline bool accepts(const Moments& m, const float* p) {
  const float dx = m.com[0] - p[0], dy = m.com[1] - p[1], dz = m.com[2] - p[2];
  return dx * dx + dy * dy + dz * dz > m.rcrit2;
}

// True when the node may be used whole for every body in the box g: the box's nearest point to
// the centre of mass is beyond r_crit.
KILN_HOST_DEVICE inline bool accepts_box(const Moments& m, const Box& g) {
  float d2 = 0.0f;
  for (int a = 0; a < 3; ++a) {
    const float below = g.lo[a] - m.com[a], above = m.com[a] - g.hi[a];
    const float out = fmaxf(0.0f, fmaxf(below, above));
    d2 += out * out;
  }
  return d2 > m.rcrit2;
}

}  // namespace kiln::nbody::tree
