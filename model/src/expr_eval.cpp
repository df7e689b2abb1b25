// Evaluation with checked 64-bit arithmetic. `&&`, `||` and `?:` evaluate only the operands they
// need, so `b != 0 && a / b > 2` never divides by zero.
#include <cstdint>
#include <limits>
#include <string>

#include "kiln/model/expr.hpp"

namespace kiln::model {
namespace {

class Evaluator {
 public:
  Evaluator(const std::string& text, const Environment& env) : text_(text), env_(env) {}

  std::int64_t integer(const Node& node) const {
    switch (node.kind) {
      case NodeKind::integer:
        return node.integer;
      case NodeKind::name: {
        const Value& v = lookup(node);
        if (const auto* i = std::get_if<std::int64_t>(&v)) return *i;
        fail("'" + node.text + "' is the symbol '" + std::get<std::string>(v) + "', not an integer", node.column);
      }
      case NodeKind::symbol:
        fail("symbol literal '" + node.text + "' used as an integer", node.column);
      case NodeKind::unary:
        return unary(node);
      case NodeKind::binary:
        return binary(node);
      case NodeKind::conditional:
        return integer(node.args[0]) != 0 ? integer(node.args[1]) : integer(node.args[2]);
      case NodeKind::call:
        return call(node);
    }
    fail("malformed expression", node.column);
  }

 private:
  [[noreturn]] void fail(const std::string& detail, int column) const { throw ExprError(detail, text_, column); }

  const Value& lookup(const Node& name) const {
    const Value* v = env_.find(name.text);
    if (v == nullptr) fail("unknown name '" + name.text + "'", name.column);
    return *v;
  }

  // An operand of == or !=: a symbol where the node is a symbol literal or names a symbol.
  Value operand(const Node& node) const {
    if (node.kind == NodeKind::symbol) return node.text;
    if (node.kind == NodeKind::name) return lookup(node);
    return integer(node);
  }

  [[noreturn]] void overflow(const Node& node) const {
    fail(std::string("64-bit overflow in '") + op_spelling(node.op) + "'", node.column);
  }

  std::int64_t unary(const Node& node) const {
    const std::int64_t a = integer(node.args[0]);
    if (node.op == Op::logical_not) return a == 0 ? 1 : 0;
    if (a == std::numeric_limits<std::int64_t>::min()) overflow(node);
    return -a;
  }

  std::int64_t binary(const Node& node) const {
    switch (node.op) {
      case Op::logical_and:
        return integer(node.args[0]) != 0 && integer(node.args[1]) != 0 ? 1 : 0;
      case Op::logical_or:
        return integer(node.args[0]) != 0 || integer(node.args[1]) != 0 ? 1 : 0;
      case Op::equal:
      case Op::not_equal:
        return equality(node);
      default:
        break;
    }
    const std::int64_t a = integer(node.args[0]);
    const std::int64_t b = integer(node.args[1]);
    std::int64_t r = 0;
    switch (node.op) {
      case Op::add:
        if (__builtin_add_overflow(a, b, &r)) overflow(node);
        return r;
      case Op::subtract:
        if (__builtin_sub_overflow(a, b, &r)) overflow(node);
        return r;
      case Op::multiply:
        if (__builtin_mul_overflow(a, b, &r)) overflow(node);
        return r;
      case Op::divide:
      case Op::modulo:
        if (b == 0) fail("division by zero", node.column);
        if (a == std::numeric_limits<std::int64_t>::min() && b == -1) overflow(node);
        return node.op == Op::divide ? a / b : a % b;
      case Op::less: return a < b ? 1 : 0;
      case Op::less_equal: return a <= b ? 1 : 0;
      case Op::greater: return a > b ? 1 : 0;
      case Op::greater_equal: return a >= b ? 1 : 0;
      default:
        fail("malformed expression", node.column);
    }
  }

  std::int64_t equality(const Node& node) const {
    const Value a = operand(node.args[0]);
    const Value b = operand(node.args[1]);
    if (a.index() != b.index()) fail("compares a symbol with an integer", node.column);
    const bool equal = a == b;
    return (node.op == Op::equal) == equal ? 1 : 0;
  }

  std::int64_t call(const Node& node) const {
    if (node.args.size() != function_arity(node.function)) {
      fail(std::string(function_name(node.function)) + " called with the wrong number of arguments", node.column);
    }
    const std::int64_t a = integer(node.args[0]);
    switch (node.function) {
      case Function::log2: {
        if (a <= 0) fail("log2 of " + std::to_string(a) + " (needs a positive number)", node.column);
        std::int64_t r = 0;
        for (std::int64_t x = a; x > 1; x >>= 1) ++r;
        return r;
      }
      case Function::is_pow2:
        return a > 0 && (a & (a - 1)) == 0 ? 1 : 0;
      default:
        break;
    }
    const std::int64_t b = integer(node.args[1]);
    switch (node.function) {
      case Function::min: return a < b ? a : b;
      case Function::max: return a > b ? a : b;
      case Function::ceil_div: return ceil_div(node, a, b);
      case Function::round_up: {
        std::int64_t r = 0;
        if (__builtin_mul_overflow(ceil_div(node, a, b), b, &r)) {
          fail("64-bit overflow in round_up", node.column);
        }
        return r;
      }
      default:
        fail("malformed expression", node.column);
    }
  }

  // The exact ceiling of a / b for any signs; C++ division truncates toward zero.
  std::int64_t ceil_div(const Node& node, std::int64_t a, std::int64_t b) const {
    if (b == 0) fail(std::string("division by zero in ") + function_name(node.function), node.column);
    if (a == std::numeric_limits<std::int64_t>::min() && b == -1) {
      fail(std::string("64-bit overflow in ") + function_name(node.function), node.column);
    }
    const std::int64_t q = a / b;
    const bool inexact = a % b != 0;
    const bool positive = (a < 0) == (b < 0);
    return inexact && positive ? q + 1 : q;
  }

  const std::string& text_;
  const Environment& env_;
};

}  // namespace

std::int64_t Expr::evaluate(const Environment& env) const { return Evaluator(text_, env).integer(root_); }

}  // namespace kiln::model
