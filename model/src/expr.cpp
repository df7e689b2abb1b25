// Small pieces of the expression language shared by the parser, checker, evaluator and C++ writer.
#include <algorithm>
#include <string>
#include <utility>

#include "kiln/model/expr.hpp"

namespace kiln::model {
namespace {

// The expression text is quoted as JSON would quote it, so that a stray quote or a control
// character cannot break the one-line error message (bytes that are not UTF-8 are escaped with
// the rest of the message, by fail_at).
// A long text is quoted up to kQuotedBytes bytes, then "...": the message stays readable.
constexpr std::size_t kQuotedBytes = 120;

std::string json_quoted(const std::string& text) {
  static const char* const hex = "0123456789abcdef";
  std::string out = "\"";
  for (char c : text.substr(0, kQuotedBytes)) {
    const auto byte = static_cast<unsigned char>(c);
    if (c == '"' || c == '\\') {
      out += '\\';
      out += c;
    } else if (byte < 0x20) {
      out += "\\u00";
      out += hex[byte >> 4];
      out += hex[byte & 0xf];
    } else {
      out += c;
    }
  }
  return out + (text.size() > kQuotedBytes ? "...\"" : "\"");
}

void collect_names(const Node& node, std::vector<std::string>& out) {
  if (node.kind == NodeKind::name && std::find(out.begin(), out.end(), node.text) == out.end()) {
    out.push_back(node.text);
  }
  for (const Node& arg : node.args) collect_names(arg, out);
}

std::size_t count_nodes(const Node& node) {
  std::size_t count = 1;
  for (const Node& arg : node.args) count += count_nodes(arg);
  return count;
}

}  // namespace

std::size_t Expr::node_count() const { return count_nodes(root_); }

ExprError::ExprError(std::string detail, std::string text, int column)
    : std::runtime_error(detail + " in " + json_quoted(text) + " (column " + std::to_string(column) + ")"),
      detail_(std::move(detail)),
      text_(std::move(text)),
      column_(column) {}

const char* function_name(Function f) {
  switch (f) {
    case Function::min: return "min";
    case Function::max: return "max";
    case Function::ceil_div: return "ceil_div";
    case Function::round_up: return "round_up";
    case Function::log2: return "log2";
    case Function::is_pow2: return "is_pow2";
  }
  return "?";
}

std::size_t function_arity(Function f) {
  return (f == Function::log2 || f == Function::is_pow2) ? 1 : 2;
}

const char* op_spelling(Op op) {
  switch (op) {
    case Op::negate: return "-";
    case Op::logical_not: return "!";
    case Op::add: return "+";
    case Op::subtract: return "-";
    case Op::multiply: return "*";
    case Op::divide: return "/";
    case Op::modulo: return "%";
    case Op::equal: return "==";
    case Op::not_equal: return "!=";
    case Op::less: return "<";
    case Op::less_equal: return "<=";
    case Op::greater: return ">";
    case Op::greater_equal: return ">=";
    case Op::logical_and: return "&&";
    case Op::logical_or: return "||";
  }
  return "?";
}

void NameTable::add_integer(std::string name) { names_[std::move(name)] = NameType{false, {}}; }

void NameTable::add_symbol(std::string name, std::vector<std::string> domain) {
  names_[std::move(name)] = NameType{true, std::move(domain)};
}

const NameType* NameTable::find(std::string_view name) const {
  auto it = names_.find(name);
  return it == names_.end() ? nullptr : &it->second;
}

void Environment::set(std::string name, Value value) {
  auto it = values_.find(name);
  if (it == values_.end()) {
    values_.emplace(std::move(name), std::move(value));
  } else {
    it->second = std::move(value);
  }
}

const Value* Environment::find(std::string_view name) const {
  auto it = values_.find(name);
  return it == values_.end() ? nullptr : &it->second;
}

Environment environment_of(const Problem& problem) {
  Environment env;
  for (const auto& [name, value] : problem.dims()) env.set(name, value);
  return env;
}

std::vector<std::string> Expr::names() const {
  std::vector<std::string> out;
  collect_names(root_, out);
  return out;
}

}  // namespace kiln::model
