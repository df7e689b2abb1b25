// The attention spaces' problem dims, in their declared order (B, Hq, Hkv, Sq, Sk, dtype, mask,
// layout): what the dispatchers choose a variant from.
#pragma once
#include <cstdint>

#include "kiln/choice.hpp"

namespace kiln::attention {

struct DispatchProblem {
  std::int64_t B = 0, Hq = 0, Hkv = 0, Sq = 0, Sk = 0;
  ::kiln::Choice dtype{"bf16"};
  ::kiln::Choice mask{"full"};
  ::kiln::Choice layout{"bshd"};
};

}  // namespace kiln::attention
