// The expression language: parsing and precedence, evaluation with checked arithmetic, type
// checking against a name table, and the C++ text for generated headers.
#include <chrono>
#include <string>

#include "kiln/model/expr.hpp"
#include "kiln_catch.hpp"

using kiln::model::Environment;
using kiln::model::Expr;
using kiln::model::ExprError;
using kiln::model::NameTable;
using kiln_test::ContainsSubstring;

namespace {

std::int64_t eval(const std::string& text, const Environment& env = Environment()) {
  return Expr::parse(text).evaluate(env);
}

// The error an action throws, as {column, message}; column 0 when it throws nothing.
template <class F>
std::pair<int, std::string> expr_error(F&& f) {
  try {
    f();
  } catch (const ExprError& e) {
    return {e.column(), e.what()};
  }
  return {0, ""};
}

std::pair<int, std::string> parse_error(const std::string& text) {
  return expr_error([&] { Expr::parse(text); });
}

std::pair<int, std::string> eval_error(const std::string& text, const Environment& env = Environment()) {
  return expr_error([&] { Expr::parse(text).evaluate(env); });
}

NameTable problem_names() {
  NameTable names;
  names.add_integer("rows");
  names.add_integer("cols");
  names.add_symbol("dtype", {"fp32", "bf16"});
  names.add_symbol("otype", {"fp32", "bf16"});
  return names;
}

std::pair<int, std::string> check_error(const std::string& text) {
  return expr_error([&] { Expr::parse(text).check(problem_names()); });
}

std::string cpp(const std::string& text) {
  return Expr::parse(text).to_cpp([](std::string_view name) { return "p." + std::string(name); });
}

}  // namespace

TEST_CASE("binary operators follow C precedence and associativity", "[expr]") {
  CHECK(eval("1 + 2 * 3") == 7);
  CHECK(eval("(1 + 2) * 3") == 9);
  CHECK(eval("10 - 4 - 3") == 3);
  CHECK(eval("100 / 10 / 5") == 2);
  CHECK(eval("2 * 3 % 4") == 2);
  CHECK(eval("1 + 2 == 3") == 1);
  CHECK(eval("1 < 2 == 2 < 1") == 0);
  CHECK(eval("1 || 0 && 0") == 1);
  CHECK(eval("0 && 1 || 1") == 1);
  CHECK(eval("3 > 2 && 2 >= 2 && 1 <= 1 && 1 != 2") == 1);
}

TEST_CASE("the conditional operator is right-associative and lowest", "[expr]") {
  CHECK(eval("0 ? 1 : 0 ? 2 : 3") == 3);
  CHECK(eval("1 ? 0 ? 5 : 6 : 7") == 6);
  CHECK(eval("1 + 1 ? 10 : 20") == 10);
  CHECK(eval("0 || 0 ? 10 : 20 + 1") == 21);
}

TEST_CASE("unary minus and not bind tighter than binary operators", "[expr]") {
  CHECK(eval("-2 * 3") == -6);
  CHECK(eval("- -3") == 3);
  CHECK(eval("!0 + 1") == 2);
  CHECK(eval("!5") == 0);
  CHECK(eval("-(2 + 3)") == -5);
}

TEST_CASE("division truncates toward zero and % takes the dividend's sign", "[expr]") {
  CHECK(eval("-7 / 2") == -3);
  CHECK(eval("7 / -2") == -3);
  CHECK(eval("-7 % 2") == -1);
  CHECK(eval("7 % -2") == 1);
}

TEST_CASE("functions", "[expr]") {
  CHECK(eval("min(3, -4)") == -4);
  CHECK(eval("max(3, -4)") == 3);
  CHECK(eval("ceil_div(7, 2)") == 4);
  CHECK(eval("ceil_div(8, 2)") == 4);
  CHECK(eval("ceil_div(-7, 2)") == -3);
  CHECK(eval("ceil_div(7, -2)") == -3);
  CHECK(eval("ceil_div(-7, -2)") == 4);
  CHECK(eval("round_up(10, 4)") == 12);
  CHECK(eval("round_up(12, 4)") == 12);
  CHECK(eval("log2(1)") == 0);
  CHECK(eval("log2(1023)") == 9);
  CHECK(eval("log2(1024)") == 10);
  CHECK(eval("is_pow2(64)") == 1);
  CHECK(eval("is_pow2(96)") == 0);
  CHECK(eval("is_pow2(0)") == 0);
  CHECK(eval("is_pow2(-4)") == 0);
  CHECK(eval("max(min(5, 9), 2) * 2") == 10);
}

TEST_CASE("names take their values from the environment", "[expr]") {
  Environment env;
  env.set("THREADS", std::int64_t{256});
  env.set("VEC", std::int64_t{8});
  env.set("dtype", std::string("bf16"));
  CHECK(eval("THREADS * VEC", env) == 2048);
  CHECK(eval("dtype == 'bf16' ? 2 : 4", env) == 2);
  CHECK(eval("'fp32' == dtype ? 2 : 4", env) == 4);
  CHECK(eval("dtype != 'fp32'", env) == 1);
  env.set("VEC", std::int64_t{2});
  CHECK(eval("THREADS * VEC", env) == 512);
}

TEST_CASE("&&, || and ?: evaluate only the operands they need", "[expr]") {
  Environment env;
  env.set("a", std::int64_t{10});
  env.set("b", std::int64_t{0});
  CHECK(eval("b != 0 && a / b > 2", env) == 0);
  CHECK(eval("b == 0 || a / b > 2", env) == 1);
  CHECK(eval("b == 0 ? 1 : a / b", env) == 1);
  CHECK(eval_error("b == 0 && a / b > 2", env).first == 13);
}

TEST_CASE("overflow is an error at the operator", "[expr]") {
  auto [col, msg] = eval_error("9223372036854775807 + 1");
  CHECK(col == 21);
  CHECK_THAT(msg, ContainsSubstring("64-bit overflow in '+'"));
  CHECK(eval_error("-9223372036854775807 - 2").first == 22);
  CHECK(eval_error("4294967296 * 4294967296").first == 12);
  CHECK(eval_error("-(-9223372036854775807 - 1)").first == 1);
  CHECK(eval_error("(-9223372036854775807 - 1) / -1").first == 28);
  CHECK(eval_error("round_up(9223372036854775807, 2)").first == 1);
  CHECK(eval("-9223372036854775807 - 1 < 0") == 1);
  CHECK(eval("9223372036854775806 + 1") == 9223372036854775807);
}

TEST_CASE("division by zero and log2 of a non-positive number are errors", "[expr]") {
  auto [col, msg] = eval_error("1 / (2 - 2)");
  CHECK(col == 3);
  CHECK(msg == "division by zero in \"1 / (2 - 2)\" (column 3)");
  CHECK(eval_error("5 % 0").first == 3);
  CHECK(eval_error("ceil_div(1, 0)").first == 1);
  CHECK(eval_error("1 + round_up(1, 0)").first == 5);
  CHECK_THAT(eval_error("log2(0)").second, ContainsSubstring("log2 of 0"));
}

TEST_CASE("syntax errors carry the column", "[expr]") {
  CHECK(parse_error("1 +").first == 4);
  CHECK_THAT(parse_error("1 +").second, ContainsSubstring("end of expression"));
  CHECK(parse_error("(1 + 2").first == 7);
  CHECK_THAT(parse_error("(1 + 2").second, ContainsSubstring("expected ')'"));
  CHECK(parse_error("1 = 2").first == 3);
  CHECK_THAT(parse_error("1 = 2").second, ContainsSubstring("'=='"));
  CHECK(parse_error("a & b").first == 3);
  CHECK(parse_error("1 2").first == 3);
  CHECK(parse_error("").first == 1);
  CHECK(parse_error("   ").first == 4);
  CHECK(parse_error("a $ b").first == 3);
  CHECK(parse_error("3x").first == 2);
  CHECK(parse_error("min(1, )").first == 8);
  CHECK(parse_error("1 ? 2").first == 6);
  CHECK(parse_error("'bf16").first == 1);
  CHECK(parse_error("''").first == 1);
  CHECK(parse_error("'1x'").first == 1);
  CHECK(parse_error("9223372036854775808").first == 1);
  auto [col, msg] = parse_error("2 * foo(3)");
  CHECK(col == 5);
  CHECK_THAT(msg, ContainsSubstring("unknown function 'foo'"));
}

TEST_CASE("hostile nesting is rejected instead of exhausting the stack", "[expr]") {
  const std::string deep = std::string(2000, '(') + "1" + std::string(2000, ')');
  CHECK_THAT(parse_error(deep).second, ContainsSubstring("nested too deeply"));
  const std::string negations(2000, '-');
  CHECK_THAT(parse_error(negations + "1").second, ContainsSubstring("nested too deeply"));
  CHECK(eval(std::string(100, '(') + "1" + std::string(100, ')')) == 1);
}

namespace {

// `1 op 1 op 1 ...` with `terms` terms, left-associative: a tree as tall as it has operators.
std::string chain(std::size_t terms, const std::string& op) {
  std::string text = "1";
  for (std::size_t i = 1; i < terms; ++i) text += op + "1";
  return text;
}

}  // namespace

TEST_CASE("a chain of operators counts toward the depth limit, whatever its length", "[expr]") {
  const auto depth = static_cast<std::size_t>(kiln::model::kMaxExpressionDepth);
  for (const std::string op : {"+", "*", "-", "==", "&&", "||", " <= "}) {
    INFO(op);
    CHECK_NOTHROW(Expr::parse(chain(depth, op)));  // depth - 1 operators: depth levels
    CHECK_THAT(parse_error(chain(depth + 1, op)).second, ContainsSubstring("nested too deeply"));
  }
  // Alternating operators and calls make the same tree height.
  std::string calls = "1";
  for (std::size_t i = 0; i < depth; ++i) calls = "min(" + calls + ", 2)";
  CHECK_THAT(parse_error(calls).second, ContainsSubstring("nested too deeply"));
  CHECK(eval(chain(200, "+")) == 200);
}

TEST_CASE("an expression longer than the limit is refused at once, with its length", "[expr]") {
  const std::size_t limit = kiln::model::kMaxExpressionBytes;
  for (const std::size_t length : {limit + 1, 16 * limit, std::size_t{64'000 * 2 + 1}}) {
    const std::string text = chain(length / 2 + 1, "+");
    INFO(text.size());
    const auto started = std::chrono::steady_clock::now();
    const auto [column, message] = parse_error(text);
    CHECK(std::chrono::steady_clock::now() - started < std::chrono::milliseconds(100));
    CHECK(column == 1);
    CHECK_THAT(message, ContainsSubstring("expression is " + std::to_string(text.size()) + " bytes, longer than the " +
                                          std::to_string(limit) + " allowed"));
    CHECK(message.size() < 300);  // the text is quoted shortened
  }
  CHECK_NOTHROW(Expr::parse(std::string(limit - 1, ' ') + "1"));
}

TEST_CASE("type checking: names must be declared", "[expr]") {
  auto [col, msg] = check_error("rows * colz");
  CHECK(col == 8);
  CHECK(msg == "unknown name 'colz' in \"rows * colz\" (column 8)");
  CHECK(check_error("dtyp == 'bf16'").first == 1);
  CHECK(check_error("'bf16' == dtyp").first == 11);
  CHECK(check_error("rows * cols + (dtype == 'bf16' ? 2 : 4)").first == 0);
}

TEST_CASE("type checking: symbols only in == and != against a literal of the domain", "[expr]") {
  CHECK(check_error("dtype == 'bf16' && otype != 'fp32'").first == 0);
  CHECK(check_error("'bf16' == dtype").first == 0);

  auto [col, msg] = check_error("rows * dtype");
  CHECK(col == 8);
  CHECK_THAT(msg, ContainsSubstring("'dtype' is symbolic (fp32, bf16)"));
  CHECK(check_error("dtype < 'bf16'").first == 1);
  CHECK(check_error("dtype").first == 1);
  CHECK(check_error("dtype == 1").first == 1);
  CHECK(check_error("dtype == otype").first == 1);
  CHECK(check_error("cols == 'bf16'").first == 9);
  CHECK_THAT(check_error("cols == 'bf16'").second, ContainsSubstring("symbol literal 'bf16'"));
  CHECK(check_error("'a' == 'a'").first == 1);
  CHECK(check_error("1 + 'bf16'").first == 5);

  auto [dcol, dmsg] = check_error("dtype == 'fp64'");
  CHECK(dcol == 10);
  CHECK(dmsg == "'fp64' is not a value of 'dtype' (fp32, bf16) in \"dtype == 'fp64'\" (column 10)");
}

TEST_CASE("type checking: function arity", "[expr]") {
  auto [col, msg] = check_error("1 + min(rows)");
  CHECK(col == 5);
  CHECK_THAT(msg, ContainsSubstring("min takes 2 arguments, got 1"));
  CHECK_THAT(check_error("log2(rows, cols)").second, ContainsSubstring("log2 takes 1 argument, got 2"));
  CHECK(check_error("is_pow2()").first == 1);
  CHECK(check_error("round_up(ceil_div(rows, 4), 8)").first == 0);
}

TEST_CASE("names lists each referenced name once, in order of appearance", "[expr]") {
  const auto names = Expr::parse("b + a * b + min(c, a) + (dtype == 'bf16')").names();
  CHECK(names == std::vector<std::string>{"b", "a", "c", "dtype"});
  CHECK(Expr::parse("1 + 2").names().empty());
}

TEST_CASE("C++ text is fully parenthesised with long long literals", "[expr]") {
  CHECK(cpp("dtype == 'bf16' && cols >= 4096") == "((p.dtype == \"bf16\") && (p.cols >= 4096LL))");
  CHECK(cpp("1 + 2 * 3") == "(1LL + (2LL * 3LL))");
  CHECK(cpp("(1 + 2) * 3") == "((1LL + 2LL) * 3LL)");
  CHECK(cpp("- -rows") == "(-(-p.rows))");
  CHECK(cpp("!rows || cols % 2") == "((!p.rows) || (p.cols % 2LL))");
  CHECK(cpp("rows > 1 ? rows : 0 ? 1 : 2") == "((p.rows > 1LL) ? p.rows : (0LL ? 1LL : 2LL))");
  CHECK(cpp("min(rows, 2) + max(cols, 1)") == "(::kiln::expr::min(p.rows, 2LL) + ::kiln::expr::max(p.cols, 1LL))");
  CHECK(cpp("ceil_div(rows, 128) * round_up(cols, 8)") ==
        "(::kiln::expr::ceil_div(p.rows, 128LL) * ::kiln::expr::round_up(p.cols, 8LL))");
  CHECK(cpp("log2(rows) - is_pow2(cols)") == "(::kiln::expr::log2(p.rows) - ::kiln::expr::is_pow2(p.cols))");
}

TEST_CASE("C++ text puts the symbolic name left of its literal", "[expr]") {
  // kiln::Choice only compares as `choice == "literal"` in C++17.
  CHECK(cpp("'bf16' == dtype") == "(p.dtype == \"bf16\")");
  CHECK(cpp("'bf16' != dtype") == "(p.dtype != \"bf16\")");
}
