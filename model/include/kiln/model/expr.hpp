// The expression language of space files (generator/README.md, "Expressions"): 64-bit integer
// arithmetic with checked overflow, comparisons of symbolic names against symbol literals, and a
// few functions. The generator parses and type-checks every expression of a space; the tuner
// evaluates `problem.work` and bucket conditions per problem, and the dispatch header carries the
// bucket conditions as C++ through to_cpp().
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <stdexcept>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "kiln/model/value.hpp"
#include "kiln/problem.hpp"

namespace kiln::model {

// Limits on one expression (generator/README.md, "Limits"): its text in bytes, and the height of
// its syntax tree, where a chain `a + b + c + ...` of n operators counts n.
inline constexpr std::size_t kMaxExpressionBytes = 4096;
inline constexpr int kMaxExpressionDepth = 256;

// Any error in an expression: syntax, type, overflow, division by zero. `column` is 1-based and
// counts bytes of the expression text; what() reads `<detail> in "<text>" (column <n>)`.
class ExprError : public std::runtime_error {
 public:
  ExprError(std::string detail, std::string text, int column);
  const std::string& detail() const { return detail_; }
  const std::string& text() const { return text_; }
  int column() const { return column_; }

 private:
  std::string detail_;
  std::string text_;
  int column_;
};

enum class NodeKind { integer, name, symbol, unary, binary, conditional, call };

enum class Op {
  negate, logical_not,                  // unary
  add, subtract, multiply, divide, modulo,
  equal, not_equal, less, less_equal, greater, greater_equal,
  logical_and, logical_or
};

enum class Function { min, max, ceil_div, round_up, log2, is_pow2 };

// One node of the syntax tree. `column` is where the node's token starts (for operators: the
// operator itself, so that "division by zero" points at the `/`).
struct Node {
  NodeKind kind = NodeKind::integer;
  int column = 1;
  std::int64_t integer = 0;  // NodeKind::integer
  std::string text;          // NodeKind::name, NodeKind::symbol (without quotes), NodeKind::call
  Op op = Op::add;           // NodeKind::unary, NodeKind::binary
  Function function = Function::min;  // NodeKind::call
  std::vector<Node> args;    // operands; conditional: condition, then, else; call: arguments
};

const char* function_name(Function f);
std::size_t function_arity(Function f);
const char* op_spelling(Op op);

// What a name stands for during type checking: an integer, or a symbol from a declared list.
struct NameType {
  bool symbolic = false;
  std::vector<std::string> domain;  // symbolic only
};

class NameTable {
 public:
  void add_integer(std::string name);
  void add_symbol(std::string name, std::vector<std::string> domain);
  const NameType* find(std::string_view name) const;
  bool contains(std::string_view name) const { return find(name) != nullptr; }

 private:
  std::map<std::string, NameType, std::less<>> names_;
};

// Values of names during evaluation.
class Environment {
 public:
  void set(std::string name, Value value);
  const Value* find(std::string_view name) const;

 private:
  std::map<std::string, Value, std::less<>> values_;
};

// The environment of a problem's dims, for work terms and bucket conditions.
Environment environment_of(const Problem& problem);

// Maps a name to the C++ text that stands for it in generated code (e.g. "cols" -> "p.cols").
using CppNameMapper = std::function<std::string(std::string_view name)>;

class Expr {
 public:
  // Throws ExprError for a syntax error, a text longer than kMaxExpressionBytes or a tree taller
  // than kMaxExpressionDepth.
  static Expr parse(std::string text);

  const std::string& text() const { return text_; }
  const Node& root() const { return root_; }

  // Throws ExprError for an unknown name, a symbol outside arithmetic-free comparisons, a symbol
  // literal outside the compared name's domain, or a function called with the wrong arity.
  void check(const NameTable& names) const;

  // Throws ExprError on overflow, division by zero, log2 of a non-positive number, an unknown
  // name, or a type error (a checked expression has none).
  std::int64_t evaluate(const Environment& env) const;

  // How many nodes the syntax tree has: the most an evaluation visits.
  std::size_t node_count() const;

  // Distinct names the expression refers to, in order of first appearance.
  std::vector<std::string> names() const;

  // Fully parenthesised C++ expression; see README "Expressions in generated C++".
  std::string to_cpp(const CppNameMapper& name_to_cpp) const;

 private:
  Expr(std::string text, Node root) : text_(std::move(text)), root_(std::move(root)) {}

  std::string text_;
  Node root_;
};

// The text determines the tree: two expressions are equal when their texts are.
inline bool operator==(const Expr& a, const Expr& b) { return a.text() == b.text(); }

}  // namespace kiln::model
