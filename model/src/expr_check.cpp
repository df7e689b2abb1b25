// Type checking. Every expression has an integer value; a symbolic name (a dimension such as dtype,
// or an identifier-valued parameter) appears only as one side of `==` / `!=` whose other side is a
// symbol literal from that name's declared list.
#include <algorithm>
#include <string>

#include "kiln/join.hpp"
#include "kiln/model/expr.hpp"
#include "kiln/model/value.hpp"

namespace kiln::model {
namespace {

class Checker {
 public:
  Checker(const std::string& text, const NameTable& names) : text_(text), names_(names) {}

  void integer(const Node& node) const {
    switch (node.kind) {
      case NodeKind::integer:
        return;
      case NodeKind::name: {
        const NameType& type = lookup(node);
        if (type.symbolic) symbolic_misuse(node, type);
        return;
      }
      case NodeKind::symbol:
        literal_misuse(node);
      case NodeKind::unary:
        integer(node.args[0]);
        return;
      case NodeKind::binary:
        if ((node.op == Op::equal || node.op == Op::not_equal) && involves_symbols(node)) {
          symbol_comparison(node);
        } else {
          integer(node.args[0]);
          integer(node.args[1]);
        }
        return;
      case NodeKind::conditional:
        for (const Node& arg : node.args) integer(arg);
        return;
      case NodeKind::call:
        call(node);
        return;
    }
  }

 private:
  [[noreturn]] void fail(const std::string& detail, int column) const { throw ExprError(detail, text_, column); }

  const NameType& lookup(const Node& name) const {
    const NameType* type = names_.find(name.text);
    if (type == nullptr) fail("unknown name '" + name.text + "'", name.column);
    return *type;
  }

  bool is_symbolic_name(const Node& node) const {
    if (node.kind != NodeKind::name) return false;
    return lookup(node).symbolic;
  }

  bool involves_symbols(const Node& node) const {
    const Node& lhs = node.args[0];
    const Node& rhs = node.args[1];
    // Unknown names are reported before any type error, left to right.
    if (lhs.kind == NodeKind::name) lookup(lhs);
    if (rhs.kind == NodeKind::name) lookup(rhs);
    return lhs.kind == NodeKind::symbol || rhs.kind == NodeKind::symbol || is_symbolic_name(lhs) ||
           is_symbolic_name(rhs);
  }

  void symbol_comparison(const Node& node) const {
    const Node& lhs = node.args[0];
    const Node& rhs = node.args[1];
    for (const Node* side : {&lhs, &rhs}) {
      const Node& other = side == &lhs ? rhs : lhs;
      if (is_symbolic_name(*side) && other.kind != NodeKind::symbol) symbolic_misuse(*side, lookup(*side));
      if (side->kind == NodeKind::symbol && !is_symbolic_name(other)) literal_misuse(*side);
    }
    const Node& name = lhs.kind == NodeKind::name ? lhs : rhs;
    const Node& literal = lhs.kind == NodeKind::symbol ? lhs : rhs;
    const NameType& type = lookup(name);
    if (std::find(type.domain.begin(), type.domain.end(), literal.text) == type.domain.end()) {
      fail("'" + literal.text + "' is not a value of '" + name.text + "' (" + join(type.domain, ", ") + ")",
           literal.column);
    }
  }

  [[noreturn]] void symbolic_misuse(const Node& name, const NameType& type) const {
    fail("'" + name.text + "' is symbolic (" + join(type.domain, ", ") +
             "); it only compares with == or != against a symbol literal",
         name.column);
  }

  [[noreturn]] void literal_misuse(const Node& literal) const {
    fail("symbol literal '" + literal.text + "' only compares with == or != against a symbolic name",
         literal.column);
  }

  void call(const Node& node) const {
    const std::size_t arity = function_arity(node.function);
    if (node.args.size() != arity) {
      fail(std::string(function_name(node.function)) + " takes " + std::to_string(arity) +
               (arity == 1 ? " argument" : " arguments") + ", got " + std::to_string(node.args.size()),
           node.column);
    }
    for (const Node& arg : node.args) integer(arg);
  }

  const std::string& text_;
  const NameTable& names_;
};

}  // namespace

void Expr::check(const NameTable& names) const { Checker(text_, names).integer(root_); }

}  // namespace kiln::model
