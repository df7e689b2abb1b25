#include "kiln/model/protocol_read.hpp"

#include <climits>
#include <cmath>

namespace kiln::model::protocol_read {

std::uint64_t count(const JsonNode& node) {
  const auto& v = node.json();
  if (v.is_number_unsigned()) return v.get<std::uint64_t>();
  if (v.is_number_integer() && v.get<std::int64_t>() >= 0) return static_cast<std::uint64_t>(v.get<std::int64_t>());
  node.fail("expected a whole number >= 0, got " + describe_json(v));
}

std::int64_t non_negative_integer(const JsonNode& node) {
  const std::int64_t v = node.integer();
  if (v < 0) node.fail("expected an integer >= 0, got " + std::to_string(v));
  return v;
}

int positive_int(const JsonNode& node) {
  const std::int64_t v = node.positive_integer();
  if (v > INT_MAX) node.fail("expected an integer from 1 to " + std::to_string(INT_MAX) + ", got " + std::to_string(v));
  return static_cast<int>(v);
}

double finite(const JsonNode& node) {
  const auto& v = node.json();
  if (!v.is_number() || !std::isfinite(v.get<double>())) node.fail("expected a number, got " + describe_json(v));
  return v.get<double>();
}

double non_negative(const JsonNode& node) {
  const double v = finite(node);
  if (v < 0) node.fail("expected a number >= 0, got " + describe_json(node.json()));
  return v;
}

bool boolean(const JsonNode& node) {
  if (!node.json().is_boolean()) node.fail("expected true or false, got " + describe_json(node.json()));
  return node.json().get<bool>();
}

std::vector<double> non_negative_numbers(const JsonNode& node) {
  std::vector<double> out;
  for (const JsonNode& e : node.elements()) out.push_back(non_negative(e));
  return out;
}

std::vector<std::int64_t> integers(const JsonNode& node) {
  std::vector<std::int64_t> out;
  for (const JsonNode& e : node.elements()) out.push_back(e.integer());
  return out;
}

Problem problem(const JsonNode& node) {
  Problem p;
  for (const JsonNode& dim : node.members()) {
    if (!is_identifier(dim.key())) dim.fail("a problem dimension's name must be an identifier");
    if (dim.json().is_string()) {
      p.set(dim.key(), dim.string());
    } else if (dim.is_integer()) {
      p.set(dim.key(), dim.integer());
    } else {
      dim.fail("expected an integer or a symbol (a string), got " + describe_json(dim.json()));
    }
  }
  return p;
}

void require_key_of(const JsonNode& key, const Problem& problem) {
  if (key.string() != problem.key()) {
    key.fail("\"" + key.string() + "\" is not the key of the problem beside it (\"" + problem.key() + "\")");
  }
}

}  // namespace kiln::model::protocol_read
