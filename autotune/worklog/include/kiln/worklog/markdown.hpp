// Reports exported from the worklog as markdown.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "kiln/worklog/worklog.hpp"

namespace kiln::worklog {

// The optimisation journey of one tuning session: header (kernel, device, strategy, dates), what
// won (per problem, the last kept attempt, against its floor), every attempt in order, the dead
// ends (failures and invalid results by kind, then reverts), the links, and the headroom left to
// the floor. The same database content always gives the same bytes. Throws kiln::Error for an
// unknown session.
std::string session_markdown(const Worklog& worklog, std::int64_t session_id);

// The method's reading of result / floor: up to 1.5 "near optimal", up to 3 "scheduling", up to
// 10 "architectural", beyond "algorithmic"; below 1 the floor or the measurement is wrong.
std::string_view floor_reading(double ratio);

// A run's stage times in one line: "368.2 s: compile 77.0 s, search 70.1 s, gate 98.9 s" (the
// total, then every stage that shows as 0.1 s or more, in the order they ran).
std::string stages_line(const std::vector<StageSeconds>& stages);

}  // namespace kiln::worklog
