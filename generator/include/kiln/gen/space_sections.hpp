// The problem half of a space file (problem, problems, checks, buckets), loaded by load_space()
// after the parameter half. Separate only to keep each source file small.
#pragma once
#include "kiln/gen/model.hpp"
#include "kiln/gen/names.hpp"
#include "kiln/gen/space.hpp"

namespace kiln::gen::sections {

// An expression string at `node`, parsed and type-checked against `names`.
Expr load_expression(const Space& space, const JsonNode& node, const NameTable& names);

// `problem`: dims (declared in `names`) and work terms.
void load_problem(const JsonNode& problem, DeclaredNames& names, Space& space);

// `problems` or `checks`: every dim with a value of its type.
std::vector<ProblemInstance> load_instances(const JsonNode& list, const Space& space);

// `buckets`: unique identifier names and conditions over dims.
void load_buckets(const JsonNode& buckets, Space& space);

// An int dim written as an object: {"type": "int", "domain": {"min", "max", "scale"}}.
Dim load_int_dim(const JsonNode& node);

// `problem.domain_constraints`: expressions over the dims.
void load_domain_constraints(const JsonNode& node, Space& space);

// Ties the domain to `tuning` (coverage required with a domain, refused without one; buckets
// required without one), then draws the coverage and held-out points.
void check_domain(const JsonNode& root, Space& space);

// Evaluates the work terms at every coverage and held-out point: an overflow is reported here.
void evaluate_domain_work(const Space& space);

// Evaluates work terms and bucket conditions for every problem; each problem must fall in a bucket.
void assign_buckets(Space& space);

}  // namespace kiln::gen::sections
