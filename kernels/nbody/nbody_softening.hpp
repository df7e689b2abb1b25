// The family's softening constant, shared by every backend and by the reference.
//   a_i = sum_j m_j (p_j - p_i) / (|p_j - p_i|^2 + eps^2)^(3/2),  eps = 0.01
// eps is below the mean nearest-neighbour distance of the measured problems in the unit cube
// (about 0.027 at n = 8192, 0.014 at n = 65536). It bounds the force of close pairs and makes the
// j = i term exactly zero, so no pair needs a special case.
#pragma once

namespace kiln::nbody {

inline constexpr float kSoftening = 0.01f;
inline constexpr float kSoftening2 = 1.0e-4f;  // eps^2 as the kernels use it

}  // namespace kiln::nbody
