// One problem instance as the harness hands it to a workload: the space's problem dimensions,
// integers or symbols, in the order the space declares them.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "kiln/error.hpp"

namespace kiln {

class Problem {
 public:
  using Value = std::variant<std::int64_t, std::string>;

  void set(std::string name, Value value) {
    for (auto& [n, v] : dims_) {
      if (n == name) {
        v = std::move(value);
        return;
      }
    }
    dims_.emplace_back(std::move(name), std::move(value));
  }

  bool has(std::string_view name) const { return find(name) != nullptr; }

  // Integer dimension; throws kiln::Error when it is missing or symbolic.
  std::int64_t i(std::string_view name) const {
    const Value* v = find(name);
    if (v == nullptr) throw Error("problem has no dimension '" + std::string(name) + "'");
    if (const auto* x = std::get_if<std::int64_t>(v)) return *x;
    throw Error("problem dimension '" + std::string(name) + "' is a symbol, not an integer");
  }

  // Symbolic dimension (e.g. dtype); throws kiln::Error when it is missing or an integer.
  const std::string& s(std::string_view name) const {
    const Value* v = find(name);
    if (v == nullptr) throw Error("problem has no dimension '" + std::string(name) + "'");
    if (const auto* x = std::get_if<std::string>(v)) return *x;
    throw Error("problem dimension '" + std::string(name) + "' is an integer, not a symbol");
  }

  const std::vector<std::pair<std::string, Value>>& dims() const { return dims_; }

  // The same dimensions with the same values, in the same order.
  friend bool operator==(const Problem& a, const Problem& b) { return a.dims_ == b.dims_; }
  friend bool operator!=(const Problem& a, const Problem& b) { return !(a == b); }

  // Canonical text form, "rows=16384 cols=8192 dtype=bf16", used as a key and in logs.
  std::string key() const {
    std::string out;
    for (const auto& [n, v] : dims_) {
      if (!out.empty()) out += ' ';
      out += n;
      out += '=';
      if (const auto* x = std::get_if<std::int64_t>(&v)) {
        out += std::to_string(*x);
      } else {
        out += std::get<std::string>(v);
      }
    }
    return out;
  }

 private:
  const Value* find(std::string_view name) const {
    for (const auto& [n, v] : dims_) {
      if (n == name) return &v;
    }
    return nullptr;
  }

  std::vector<std::pair<std::string, Value>> dims_;
};

}  // namespace kiln
