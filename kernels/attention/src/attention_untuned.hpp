// Variants used where the build has no tuned header: the defaults of attention_d64.space.json and
// attention_d128.space.json (keep them equal). Each handles every problem; SPLIT_TARGET > 0 lets
// them split the keys when the grid would leave SMs idle.
#pragma once
#include "attention_config.hpp"
#include "attention_problem.hpp"

namespace kiln::attention::untuned {

KILN_ATTENTION_CONFIG(DefaultD64, 64, 128, 64, 4, 2, 0, 2);
KILN_ATTENTION_CONFIG(DefaultD128, 128, 128, 64, 8, 2, 1, 2);

template <class Launch>
decltype(auto) dispatch_d64(const DispatchProblem&, Launch&& launch) {
  return launch(DefaultD64{});
}

template <class Launch>
decltype(auto) dispatch_d128(const DispatchProblem&, Launch&& launch) {
  return launch(DefaultD128{});
}

}  // namespace kiln::attention::untuned
