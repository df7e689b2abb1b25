// Enumerating the variants of a space for a target: the odometer over parameter values (declared
// order, last parameter fastest), derived values per combination, constraints in order.
#pragma once
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "kiln/gen/space.hpp"

namespace kiln::gen {

// The generator refuses to enumerate more combinations than this (checked before enumerating).
inline constexpr std::uint64_t kMaxCombinations = 1'000'000;

using model::Variant;  // with its source, variants/<name>.cpp (cpu) or variants/<name>.cu (cuda)

// "variants/<name>.cpp" for cpu, "variants/<name>.cu" for cuda: relative to the output directory.
std::filesystem::path variant_source_path(const Space& space, const std::string& name);

struct Enumeration {
  std::uint64_t total = 0;            // combinations of parameter values
  std::vector<Variant> variants;      // the feasible ones, in enumeration order
  std::vector<std::uint64_t> pruned;  // per constraint: combinations it is the first to violate
  std::size_t default_index = 0;      // the default variant, an index into `variants`
};

// Throws InputError when there are more than kMaxCombinations combinations, when evaluating a
// derived value or constraint fails, when no combination is feasible (naming the constraint that
// prunes most), when the default variant is infeasible (naming the constraint it violates), when
// there are more feasible variants than tuning.max_variants, or when two variants get one name.
Enumeration enumerate_variants(const Space& space, const Device& target);

// Sets the combination's parameters and then each derived value, in the space's order, in `env`
// (which holds the target's limits): what its constraints are evaluated in. Throws InputError, as
// enumerate_variants does, when a derived value fails to evaluate.
void set_combination(const Space& space, const std::vector<Value>& params, model::Environment& env);
// The same in a new environment of the target's limits: a variant's derived values by name.
model::Environment combination_environment(const Space& space, const Device& target, const std::vector<Value>& params);

// The canonical name of a combination; a negative integer -3 is written m3.
std::string variant_name(const Space& space, const std::vector<Value>& params);

// One value as it appears in a variant name: the identifier, or the integer (-3 as m3).
std::string variant_name_part(const Value& v);

}  // namespace kiln::gen
