// manifest.json (generator/README.md, "Outputs"): the validated space with its defaults filled
// in, plus what enumeration found. The generator builds a Manifest and writes it with to_json();
// the tuner and the header writer read it back with from_json(), never the space file itself. One
// struct and one pair of functions, so the writer and the reader cannot drift apart.
#pragma once
#include <cstdint>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "kiln/model/json_reader.hpp"
#include "kiln/model/space_parts.hpp"
#include "kiln/problem.hpp"

namespace kiln::model {

// How many combinations the constraints pruned.
struct Pruned {
  std::uint64_t total = 0;     // combinations of parameter values
  std::uint64_t feasible = 0;  // variants
  std::vector<std::uint64_t> by_constraint;  // per constraint: combinations it is the first to violate
  bool operator==(const Pruned&) const = default;
};

struct Manifest {
  std::filesystem::path file;  // where it was read from; not part of its content
  std::string kernel;
  std::string backend;
  std::string description;     // empty when the space gives none
  std::filesystem::path space_file;  // absolute
  std::string space_hash;      // FNV-1a 64 of the space file's bytes, 16 hex digits
  std::string target;          // the device file's name
  Harness harness;
  std::vector<Parameter> parameters;
  std::vector<Derived> derived;
  std::vector<Constraint> constraints;
  std::vector<Variant> variants;  // in enumeration order
  std::string default_variant;
  Pruned pruned;
  std::vector<Dim> dims;
  std::vector<Expr> domain_constraints;  // over dims; empty without a domain
  std::vector<Feature> features;         // over the dims; only with a domain
  std::vector<WorkTerm> work;
  std::vector<Problem> problems;
  std::vector<Problem> checks;
  // The problem domain's points (generator/README.md, "Problem domains"); both empty without one.
  std::vector<Problem> coverage;  // timed on the finalists; the learned dispatch is fitted to them
  std::vector<Problem> held_out;  // never tuned on: the dispatch is judged on them
  // Points of the domain in neither set, where the tuner may add refinement points (tuning.refine).
  std::vector<Problem> refine_candidates;
  std::vector<Bucket> buckets;
  Tolerance tolerance = default_tolerance();
  Tuning tuning;

  bool operator==(const Manifest&) const = default;

  // True when the space declares a problem domain (a range on its int dims).
  bool has_domain() const;
  std::optional<std::size_t> variant_index(const std::string& name) const;
  // Index of the first bucket whose condition holds for the problem, if any.
  std::optional<std::size_t> bucket_of(const Problem& p) const;
  // The problem with each feature's value beside its dims, as the learned dispatch reads it.
  Problem with_features(const Problem& p) const;
  // Work per resource for one problem, as the space's expressions give it.
  std::map<std::string, double> work_of(const Problem& p) const;
};

// The manifest's JSON, keys in the README's order. Without a domain, the keys and bytes of
// manifests made before domains existed.
nlohmann::ordered_json to_json(const Manifest& m);

// The manifest a JSON file holds; relative variant sources are resolved against `base_dir` (the
// manifest file's directory; empty keeps them relative). A missing field, a field of the wrong
// type or range, an expression that does not parse or a default variant that is not among the
// variants is one InputError: "<label>: <JSON pointer>: <what is wrong>".
Manifest from_json(const JsonFile& file, const std::filesystem::path& base_dir);
// The same for a JSON value already in memory, named `label` in messages (it is copied).
Manifest from_json(const nlohmann::ordered_json& j, const std::string& label, const std::filesystem::path& base_dir);

// Reads `file` (up to kMaxManifestBytes) with from_json(); `file` is recorded in the result.
Manifest load_manifest(const std::filesystem::path& file);

}  // namespace kiln::model
