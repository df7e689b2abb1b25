// An int dim's problem domain as a space file declares it and a manifest repeats it:
// {"min": 1, "max": 4096, "scale": "log"}, read by one set of rules in both.
#pragma once
#include <cstdint>

#include "kiln/model/json_reader.hpp"
#include "kiln/model/space_parts.hpp"

namespace kiln::model {

// The largest end of a domain: beyond it a domain is too large to sample.
inline constexpr std::int64_t kMaxDomainValue = std::int64_t{1} << 48;

// Reads `domain` (an object of min, max and an optional scale, log by default): min from 1, max
// from min, both at most kMaxDomainValue; any other key, type or value is one error at its place.
IntRange read_int_range(const JsonNode& domain);

}  // namespace kiln::model
