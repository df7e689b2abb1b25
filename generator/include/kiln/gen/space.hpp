// A space file and a target device file, loaded and validated completely (generator/README.md).
// Loading throws InputError with one message, `<file>: <json-pointer>: <what is wrong>`.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "kiln/gen/model.hpp"
#include "kiln/model/device.hpp"
#include "kiln/model/domain_read.hpp"
#include "kiln/model/space_parts.hpp"

namespace kiln::gen {

// Limits on a space file (generator/README.md, "Limits"); each is checked where the file declares
// the entries, before anything is evaluated.
inline constexpr std::size_t kMaxParameters = 64;
inline constexpr std::size_t kMaxValues = 1024;        // per parameter
inline constexpr std::size_t kMaxDerived = 256;
inline constexpr std::size_t kMaxConstraints = 256;
inline constexpr std::size_t kMaxDims = 64;
inline constexpr std::size_t kMaxProblems = 4096;      // problems, and checks
inline constexpr std::size_t kMaxBuckets = 256;
// The longest canonical variant name: it is a file name (plus ".cpp" and the temporary file's
// "." and ".kiln-tmp"), a CMake target name, and a path part of every object file built from it;
// file systems allow 255 bytes.
inline constexpr std::size_t kMaxVariantNameBytes = 200;
// The most expression nodes the generator evaluates for one space, counted before evaluating:
// combinations times the nodes of derived values and constraints, and problems times the nodes of
// work terms and bucket conditions. It bounds the time of `kiln generate` to seconds.
inline constexpr std::uint64_t kMaxEvaluatedNodes = 50'000'000;
// Problem domains (generator/README.md, "Problem domains"): the most coverage or held-out points a
// space may ask for, the most domain constraints, and the largest end of an int dim's range (sizes
// are drawn in double precision, exact far beyond it).
inline constexpr std::int64_t kMaxDomainPoints = 1024;
// Refinement candidates drawn per refinement point (tuning.refine): the tuner picks each point as
// the candidate farthest from its leaf's coverage points, so the pool has to be dense enough to
// hold such a candidate in every leaf.
inline constexpr std::int64_t kRefineCandidatesPerPoint = 16;
inline constexpr std::size_t kMaxDomainConstraints = 64;
inline constexpr std::size_t kMaxFeatures = 16;
using model::kMaxDomainValue;

// Throws (at `pointer`) when `count` evaluations of `exprs_nodes` nodes each exceed
// kMaxEvaluatedNodes; `what` says what is counted ("combinations", "problems").
void check_evaluation_cost(const std::string& label, const std::string& pointer, std::uint64_t count,
                           std::uint64_t nodes, const std::string& what);

// The device file the space is checked against (--target): its name, backend and limits.
using model::Device;
using model::load_device;

using model::Harness;
using model::IntRange;
using model::Parameter;
using model::Tolerance;
using model::Tuning;

// The shared parts, each with where the space file declares it (a JSON pointer, for messages).
struct Derived : model::Derived {
  std::string pointer;  // of the expression
};

struct Constraint : model::Constraint {
  std::string pointer;       // the constraint: /constraints/<i>
  std::string expr_pointer;  // its expression: the same, or /constraints/<i>/expr
};

struct Dim : model::Dim {
  std::string pointer;  // /problem/dims/<name>
};

struct WorkTerm : model::WorkTerm {
  std::string pointer;
};

// One entry of `problems` or `checks`: a value for every dim, in the dims' order.
struct ProblemInstance {
  std::string pointer;
  std::vector<Value> values;
};

struct Bucket : model::Bucket {
  std::string pointer;  // of `when`
};

struct Space {
  std::string label;            // the path as given; starts every message about this space
  std::filesystem::path file;   // as given
  std::string hash;             // FNV-1a 64 of the file's bytes, 16 hex digits
  std::string kernel;
  std::string backend;          // a backend's name (kiln/model/backend.hpp)
  std::string description;      // empty when absent
  Harness harness;
  std::vector<Parameter> parameters;
  std::vector<Derived> derived;
  std::vector<Constraint> constraints;
  std::vector<Dim> dims;
  std::vector<WorkTerm> work;
  std::vector<ProblemInstance> problems;
  std::vector<ProblemInstance> checks;
  std::vector<Bucket> buckets;  // may be empty with a domain: the tuner learns the dispatch
  std::vector<std::size_t> problem_buckets;  // for each problem, the index of its bucket
  std::vector<Constraint> domain_constraints;  // over dims: which points the domain holds
  std::vector<model::Feature> features;        // over int dims: what the learned dispatch may split on
  // Drawn from the domain by sample_domain (domain.hpp) when the space has one.
  std::vector<ProblemInstance> coverage;
  std::vector<ProblemInstance> held_out;
  // Drawn with tuning.refine: kRefineCandidatesPerPoint points per refinement point, in neither set.
  std::vector<ProblemInstance> refine_candidates;
  Tolerance tolerance = model::default_tolerance();
  Tuning tuning;
};

// Reads and validates `file` against `target`: everything in the README's space-file section
// except what needs enumeration (feasibility, variant counts, the default variant's constraints).
Space load_space(const std::filesystem::path& file, const Device& target);
// The same for a file already read (`file` is recorded as the space's path).
Space load_space(const JsonFile& json, const std::filesystem::path& file, const Device& target);

// Throws the error of an expression at `pointer`: `<file>: <pointer>: <error>[ for <context>]`.
[[noreturn]] void fail_expr(const Space& space, const std::string& pointer, const ExprError& error,
                            const std::string& context = "");

// The environment of a problem's dims, for work terms and bucket conditions.
Environment problem_environment(const Space& space, const ProblemInstance& problem);

// "rows=16384 cols=8192 dtype=bf16"
std::string problem_key(const Space& space, const ProblemInstance& problem);

// Names visible to `problem.work` and `buckets[].when`: the dims.
NameTable dim_names(const Space& space);

// True when the space declares a problem domain (a range on its int dims).
bool has_domain(const Space& space);

}  // namespace kiln::gen
