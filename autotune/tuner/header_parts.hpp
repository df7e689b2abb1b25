// Pieces every dispatch header shares (header.cpp for buckets, header_tree.cpp for a learned
// dispatch): number formats, C++ literals, the preamble, the Problem and Config structs.
#pragma once
#include <cstdint>
#include <ostream>
#include <string>
#include <vector>

#include "header.hpp"
#include "kiln/model/config_struct.hpp"

namespace kiln::tuner {

std::string number(double v, int digits = 4);  // %g with `digits` significant digits
std::string microseconds(double seconds);      // "12.34 us"
using model::cpp_string;       // a C++ string literal
using model::integer_literal;  // "4096LL"

// The file's comment, the include and the namespace's opening; `tuned` names where the record
// was measured, or is null for a header of defaults.
void write_preamble(std::ostream& h, const Manifest& m, const Record* tuned);
// struct Problem, the dims in the space's order.
void write_problem_struct(std::ostream& h, const Manifest& m);
// The same under another comment line (a family's problem, which every member takes).
void write_problem_struct(std::ostream& h, const std::vector<Dim>& dims, const std::string& comment);
// The struct of one configuration (model::config_struct), named after its canonical variant name.
void write_config_struct(std::ostream& h, const Manifest& m, const Variant& v);

}  // namespace kiln::tuner
