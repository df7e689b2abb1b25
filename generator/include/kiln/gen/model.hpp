// The generator works on the model's types (model/): its expressions, values, backends and strict
// JSON reading. Declared here once so that the generator's sources name them as their own.
#pragma once
#include "kiln/model/backend.hpp"
#include "kiln/model/expr.hpp"
#include "kiln/model/json_reader.hpp"
#include "kiln/model/value.hpp"

namespace kiln::gen {

using model::Backend;
using model::backend_named;
using model::backend_of;
using model::describe_json;
using model::Environment;
using model::Expr;
using model::ExprError;
using model::fail_at;
using model::InputError;
using model::is_identifier;
using model::JsonFile;
using model::JsonNode;
using model::kMaxIdentifierBytes;
using model::NameTable;
using model::parse_json_text;
using model::pointer_append;
using model::read_json_file;
using model::Value;
using model::value_text;

}  // namespace kiln::gen
