// Harness of the head-dimension-256 space (attention_d256.space.json): the shared attention
// workload at D = 256. A header of its own because a space's sources key its measurements in the
// worklog: d64 and d128 do not list this file, so their records do not depend on it.
#pragma once
#include "attention_workload.cuh"

namespace kiln::attention {

using WorkloadD256 = Workload<256>;

}  // namespace kiln::attention
