// What a tuning record says, as markdown: per bucket and problem, the winner, its time, the
// floor, the ratio and the method's reading of it.
#pragma once
#include <string>

#include "kiln/worklog/worklog.hpp"
#include "record.hpp"

namespace kiln::tuner {

// With a problem domain, also the figures over its held-out points (domain_report.hpp), linking
// the heat maps in `svg_dir` when it is not empty.
std::string record_markdown(const Record& record, const std::string& svg_dir = "");

// Per bucket and problem, the winner (and its first `runners_up` contenders): what limits it, by
// the method's hierarchy (bottleneck.hpp), from the profiles the worklog holds for the record's
// context: Nsight Compute's metrics where kiln profile measured them, else the launch shape the
// harness recorded while timing (flags for too few CTAs, an idle last wave).
std::string bottleneck_markdown(const Record& record, const worklog::Worklog& log, int runners_up = 0);

}  // namespace kiln::tuner
