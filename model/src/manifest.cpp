#include "kiln/model/manifest.hpp"

#include <algorithm>

namespace kiln::model {

bool Manifest::has_domain() const {
  return std::any_of(dims.begin(), dims.end(), [](const Dim& d) { return d.range.has_value(); });
}

std::optional<std::size_t> Manifest::variant_index(const std::string& name) const {
  for (std::size_t i = 0; i < variants.size(); ++i) {
    if (variants[i].name == name) return i;
  }
  return std::nullopt;
}

std::optional<std::size_t> Manifest::bucket_of(const Problem& p) const {
  const Environment env = environment_of(p);
  for (std::size_t i = 0; i < buckets.size(); ++i) {
    if (buckets[i].when.evaluate(env) != 0) return i;
  }
  return std::nullopt;
}

Problem Manifest::with_features(const Problem& p) const {
  if (features.empty()) return p;
  const Environment env = environment_of(p);
  Problem out = p;
  for (const Feature& f : features) out.set(f.name, f.expr.evaluate(env));
  return out;
}

std::map<std::string, double> Manifest::work_of(const Problem& p) const {
  const Environment env = environment_of(p);
  std::map<std::string, double> out;
  for (const WorkTerm& term : work) out[term.name] = static_cast<double>(term.expr.evaluate(env));
  return out;
}

}  // namespace kiln::model
