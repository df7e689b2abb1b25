// The problem half of a space file (problem, problems, checks, buckets), loaded by load_space()
// after the parameter half. Separate only to keep each source file small.
#pragma once
#include "kiln/gen/json_reader.hpp"
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

// Evaluates work terms and bucket conditions for every problem; each problem must fall in a bucket.
void assign_buckets(Space& space);

}  // namespace kiln::gen::sections
