#include "kiln/model/domain_read.hpp"

#include <string>

namespace kiln::model {
namespace {

std::int64_t range_end(const JsonNode& node) {
  const std::int64_t v = node.integer();
  if (v > kMaxDomainValue) {
    node.fail("the domain is too large to sample: " + std::to_string(v) + " is beyond " +
              std::to_string(kMaxDomainValue) + " (2^48)");
  }
  return v;
}

}  // namespace

IntRange read_int_range(const JsonNode& domain) {
  domain.require_object({"min", "max", "scale"}, {"min", "max"});
  IntRange range;
  range.min = range_end(domain["min"]);
  range.max = range_end(domain["max"]);
  if (domain.has("scale")) {
    const std::string scale = domain["scale"].string();  // a copy: the node is a temporary
    if (scale != "log" && scale != "linear") {
      domain["scale"].fail("expected \"log\" or \"linear\", got " + describe_json(domain["scale"].json()));
    }
    range.log = scale == "log";
  }
  if (range.max < range.min) {
    domain["max"].fail("max " + std::to_string(range.max) + " is below min " + std::to_string(range.min) +
                       " (an empty range)");
  }
  if (range.min <= 0) {
    domain["min"].fail(std::string("min ") + std::to_string(range.min) +
                       (range.log ? " is not positive: a log scale needs sizes of at least 1"
                                  : " is not positive: problem sizes are at least 1"));
  }
  return range;
}

}  // namespace kiln::model
