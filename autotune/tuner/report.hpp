// What a tuning record says, as markdown: per bucket and problem, the winner, its time, the
// floor, the ratio and the method's reading of it.
#pragma once
#include <string>

#include "record.hpp"

namespace kiln::tuner {

std::string record_markdown(const Record& record);

}  // namespace kiln::tuner
