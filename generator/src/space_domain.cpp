// Loading the problem domain of a space file: int dims written as objects with a `domain`, the
// `domain_constraints` across dims, and the checks that tie them to `tuning`.
#include <algorithm>
#include <cmath>

#include "kiln/gen/domain.hpp"
#include "kiln/gen/space_sections.hpp"
#include "kiln/model/domain_read.hpp"

namespace kiln::gen::sections {

Dim load_int_dim(const JsonNode& node) {
  node.require_object({"type", "domain"}, {"type"});
  const JsonNode type = node["type"];
  if (!type.json().is_string() || type.json().get_ref<const std::string&>() != "int") {
    type.fail("expected \"int\" (a symbolic dim lists its values instead), got " + describe_json(type.json()));
  }
  Dim dim;
  dim.name = node.key();
  dim.pointer = node.pointer();
  if (!node.has("domain")) return dim;
  dim.range = model::read_int_range(node["domain"]);
  return dim;
}

void load_domain_constraints(const JsonNode& node, Space& space) {
  node.require_at_most(kMaxDomainConstraints, "domain constraints");
  const NameTable visible = dim_names(space);
  for (const JsonNode& element : node.elements()) {
    space.domain_constraints.push_back(
        Constraint{{load_expression(space, element, visible), ""}, element.pointer(), element.pointer()});
  }
  if (space.domain_constraints.empty()) node.fail("an empty list: leave the key out instead");
}

void check_domain(const JsonNode& root, Space& space) {
  const JsonNode problem = root["problem"];
  const bool domain = has_domain(space);
  if (!domain) {
    if (problem.has("domain_constraints")) {
      problem["domain_constraints"].fail("domain constraints need a domain (a \"domain\" on every int dim)");
    }
    if (space.tuning.coverage > 0 || space.tuning.held_out > 0) {
      root["tuning"].fail("tuning.coverage and tuning.held_out need a problem domain (a \"domain\" on every int dim)");
    }
    if (problem.has("features")) problem["features"].fail("features need a domain (a \"domain\" on every int dim)");
    if (!space.tuning.alternate.empty()) {
      root["tuning"]["alternate"].fail("tuning.alternate needs a problem domain (a \"domain\" on every int dim)");
    }
    if (!space.tuning.reach.empty()) {
      root["tuning"]["reach"].fail("tuning.reach needs a problem domain (a \"domain\" on every int dim)");
    }
    if (!root.has("buckets")) fail_at(space.label, "/buckets", "required key is missing");
    return;
  }
  bool any_int = false;
  for (const Dim& dim : space.dims) {
    if (dim.symbolic) continue;
    any_int = true;
    if (!dim.range) {
      fail_at(space.label, dim.pointer,
              "a problem domain needs a range on every int dim: write {\"type\": \"int\", \"domain\": {\"min\": ..., "
              "\"max\": ..., \"scale\": \"log\"}}");
    }
  }
  if (!any_int) fail_at(space.label, "/problem/dims", "a problem domain needs at least one int dim");
  for (std::size_t i = 0; i < space.tuning.alternate.size(); ++i) {
    const std::string& name = space.tuning.alternate[i];
    const auto dim = std::find_if(space.dims.begin(), space.dims.end(), [&](const Dim& d) { return d.name == name; });
    if (dim == space.dims.end() || !dim->symbolic) {
      root["tuning"]["alternate"].elements()[i].fail(
          (dim == space.dims.end() ? "no problem dim is named \"" + name + "\""
                                   : "\"" + name + "\" is an int dim: its values come from its range") +
          "; tuning.alternate names symbolic dims, whose values the points take in turn");
    }
  }
  for (const model::Reach& r : space.tuning.reach) {
    const auto dim = std::find_if(space.dims.begin(), space.dims.end(), [&](const Dim& d) { return d.name == r.dim; });
    if (dim == space.dims.end() || dim->symbolic) {
      root["tuning"]["reach"][r.dim].fail(
          (dim == space.dims.end() ? "no problem dim is named \"" + r.dim + "\""
                                   : "\"" + r.dim + "\" is a symbolic dim") +
          "; tuning.reach gives the largest value of an int dim a variant serves on its fast path");
    }
  }
  std::int64_t alternations = 1;
  for (const std::string& name : space.tuning.alternate) {
    const auto dim = std::find_if(space.dims.begin(), space.dims.end(), [&](const Dim& d) { return d.name == name; });
    alternations *= static_cast<std::int64_t>(dim->domain.size());
    if (alternations > kMaxDomainPoints) {
      root["tuning"]["alternate"].fail("the alternating dims have more than " + std::to_string(kMaxDomainPoints) +
                                       " combinations of values, more than a domain may sample points: cross some of them");
    }
  }
  if (space.tuning.coverage == 0) {
    fail_at(space.label, "/tuning/coverage", "a problem domain needs tuning.coverage (how many points to tune on)");
  }
  if (space.tuning.held_out == 0) space.tuning.held_out = std::max<std::int64_t>(1, space.tuning.coverage / 2);
  sample_domain(space);
}

}  // namespace kiln::gen::sections

namespace kiln::gen {

bool has_domain(const Space& space) {
  return std::any_of(space.dims.begin(), space.dims.end(), [](const Dim& d) { return d.range.has_value(); });
}

}  // namespace kiln::gen
