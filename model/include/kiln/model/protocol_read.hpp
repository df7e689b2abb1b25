// The value readers the protocol's types (protocol.hpp) and the tuning records share: each
// rejects any other type or range with an InputError naming the place.
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "kiln/model/json_reader.hpp"
#include "kiln/problem.hpp"

namespace kiln::model::protocol_read {

std::uint64_t count(const JsonNode& node);      // an integer from 0 to 2^64 - 1
std::int64_t non_negative_integer(const JsonNode& node);
int positive_int(const JsonNode& node);         // 1 to INT_MAX
double finite(const JsonNode& node);            // any finite number
double non_negative(const JsonNode& node);      // a finite number >= 0
bool boolean(const JsonNode& node);
std::vector<double> non_negative_numbers(const JsonNode& node);
std::vector<std::int64_t> integers(const JsonNode& node);

// {"rows": 16384, "dtype": "bf16"}: dimension names are identifiers, values integers or symbols.
Problem problem(const JsonNode& node);
// A `key` beside a `problem` must be that problem's key: the two cannot disagree.
void require_key_of(const JsonNode& key, const Problem& problem);

// `node[key]` read by `read` when the key is there.
template <class Read>
auto optional(const JsonNode& node, const char* key, Read read) -> std::optional<decltype(read(node))> {
  if (!node.has(key)) return std::nullopt;
  return read(node[key]);
}

}  // namespace kiln::model::protocol_read
