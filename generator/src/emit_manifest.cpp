// The manifest: the validated space with defaults filled in, plus what enumeration found. The
// tuner and the dispatch-header writer read only this (model/manifest.hpp), never the space file.
#include "kiln/gen/emit.hpp"

namespace kiln::gen {
namespace {

std::vector<Problem> problems_of(const Space& space, const std::vector<ProblemInstance>& instances) {
  std::vector<Problem> out;
  for (const ProblemInstance& instance : instances) {
    Problem p;
    for (std::size_t i = 0; i < space.dims.size(); ++i) p.set(space.dims[i].name, instance.values[i]);
    out.push_back(std::move(p));
  }
  return out;
}

// The shared part of each located entry, without where the space file declares it.
template <typename Shared, typename Located>
std::vector<Shared> shared_parts(const std::vector<Located>& entries) {
  return std::vector<Shared>(entries.begin(), entries.end());
}

}  // namespace

model::Manifest manifest(const Space& space, const Device& target, const Enumeration& enumeration) {
  model::Manifest m;
  m.kernel = space.kernel;
  m.backend = space.backend;
  m.description = space.description;
  m.space_file = std::filesystem::absolute(space.file).lexically_normal();
  m.space_hash = space.hash;
  m.target = target.name;
  m.harness = space.harness;
  m.parameters = space.parameters;
  m.derived = shared_parts<model::Derived>(space.derived);
  m.constraints = shared_parts<model::Constraint>(space.constraints);
  m.variants = enumeration.variants;
  m.default_variant = enumeration.variants[enumeration.default_index].name;
  m.pruned = model::Pruned{enumeration.total, enumeration.variants.size(), enumeration.pruned};
  m.dims = shared_parts<model::Dim>(space.dims);
  for (const Constraint& c : space.domain_constraints) m.domain_constraints.push_back(c.expr);
  m.features = space.features;
  m.work = shared_parts<model::WorkTerm>(space.work);
  m.problems = problems_of(space, space.problems);
  m.checks = problems_of(space, space.checks);
  m.coverage = problems_of(space, space.coverage);
  m.held_out = problems_of(space, space.held_out);
  m.refine_candidates = problems_of(space, space.refine_candidates);
  m.buckets = shared_parts<model::Bucket>(space.buckets);
  m.tolerance = space.tolerance;
  m.tuning = space.tuning;
  return m;
}

}  // namespace kiln::gen
