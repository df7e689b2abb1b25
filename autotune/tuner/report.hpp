// What a tuning record says, as markdown: per bucket and problem, the winner, its time, the
// floor, the ratio and the method's reading of it.
#pragma once
#include <string>

#include "record.hpp"

namespace kiln::tuner {

// With a problem domain, also the figures over its held-out points (domain_report.hpp), linking
// the heat maps in `svg_dir` when it is not empty.
std::string record_markdown(const Record& record, const std::string& svg_dir = "");

}  // namespace kiln::tuner
