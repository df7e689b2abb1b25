// C++ text of an expression, for generated dispatch headers. Every operator application is
// parenthesised so that C++ precedence never matters; integers are `long long` literals so that
// arithmetic happens in 64 bits as in the generator; functions map to the constexpr helpers in
// namespace ::kiln::expr.
#include <string>
#include <utility>

#include "kiln/model/expr.hpp"

namespace kiln::model {
namespace {

std::string emit(const Node& node, const CppNameMapper& name_to_cpp) {
  switch (node.kind) {
    case NodeKind::integer:
      return std::to_string(node.integer) + "LL";
    case NodeKind::name:
      return name_to_cpp(node.text);
    case NodeKind::symbol:
      // A symbol is an identifier, so it needs no escaping inside a string literal.
      return "\"" + node.text + "\"";
    case NodeKind::unary:
      return std::string("(") + op_spelling(node.op) + emit(node.args[0], name_to_cpp) + ")";
    case NodeKind::binary: {
      const Node* lhs = &node.args[0];
      const Node* rhs = &node.args[1];
      // kiln::Choice compares with a string literal only with the Choice on the left (C++17 has
      // no rewritten comparison candidates), and == / != are symmetric.
      const bool symmetric = node.op == Op::equal || node.op == Op::not_equal;
      if (symmetric && lhs->kind == NodeKind::symbol) std::swap(lhs, rhs);
      // Appended in turn: GCC 12 warns falsely (-Wstringop-overflow, -Warray-bounds) about
      // "(" + std::string&&, which it inlines as an insert at the front.
      std::string out = "(";
      out += emit(*lhs, name_to_cpp);
      out += " ";
      out += op_spelling(node.op);
      out += " ";
      out += emit(*rhs, name_to_cpp);
      return out + ")";
    }
    case NodeKind::conditional:
    {
      std::string out = "(";
      out += emit(node.args[0], name_to_cpp);
      out += " ? ";
      out += emit(node.args[1], name_to_cpp);
      out += " : ";
      out += emit(node.args[2], name_to_cpp);
      return out + ")";
    }
    case NodeKind::call: {
      std::string out = std::string("::kiln::expr::") + function_name(node.function) + "(";
      for (std::size_t i = 0; i < node.args.size(); ++i) {
        if (i > 0) out += ", ";
        out += emit(node.args[i], name_to_cpp);
      }
      return out + ")";
    }
  }
  return "";
}

}  // namespace

std::string Expr::to_cpp(const CppNameMapper& name_to_cpp) const { return emit(root_, name_to_cpp); }

}  // namespace kiln::model
