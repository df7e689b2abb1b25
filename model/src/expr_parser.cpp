// Tokenizer and precedence-climbing parser of the expression language.
//
// Linear in the length of the text (at most kMaxExpressionBytes), and the tree it builds is at
// most kMaxExpressionDepth levels tall.
//
// Precedence, lowest first (as in C): `?:` (right-associative), `||`, `&&`, `== !=`,
// `< <= > >=`, `+ -`, `* / %`, unary `- !`.
#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "kiln/model/expr.hpp"

namespace kiln::model {
namespace {

enum class Tok { integer, name, symbol, op, lparen, rparen, comma, question, colon, end };

struct Token {
  Tok kind = Tok::end;
  int column = 1;
  std::string text;  // spelling; for symbols the identifier without quotes
  std::int64_t integer = 0;
};

bool is_ident_start(char c) { return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || c == '_'; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_ident_char(char c) { return is_ident_start(c) || is_digit(c); }

class Lexer {
 public:
  explicit Lexer(const std::string& text) : text_(text) {}

  std::vector<Token> tokens() {
    std::vector<Token> out;
    while (true) {
      skip_space();
      if (pos_ >= text_.size()) {
        out.push_back(Token{Tok::end, column(), "", 0});
        return out;
      }
      out.push_back(next());
    }
  }

 private:
  int column() const { return static_cast<int>(pos_) + 1; }

  [[noreturn]] void fail(const std::string& detail, int col) const { throw ExprError(detail, text_, col); }

  void skip_space() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t')) ++pos_;
  }

  Token next() {
    const int col = column();
    const char c = text_[pos_];
    if (is_digit(c)) return integer(col);
    if (is_ident_start(c)) {
      std::size_t start = pos_;
      while (pos_ < text_.size() && is_ident_char(text_[pos_])) ++pos_;
      return Token{Tok::name, col, text_.substr(start, pos_ - start), 0};
    }
    if (c == '\'') return symbol(col);
    return punctuation(col);
  }

  Token integer(int col) {
    std::int64_t value = 0;
    while (pos_ < text_.size() && is_digit(text_[pos_])) {
      const int digit = text_[pos_] - '0';
      if (__builtin_mul_overflow(value, 10, &value) || __builtin_add_overflow(value, digit, &value)) {
        fail("integer literal does not fit in 64 bits", col);
      }
      ++pos_;
    }
    if (pos_ < text_.size() && is_ident_start(text_[pos_])) {
      fail("a number is directly followed by a letter", column());
    }
    return Token{Tok::integer, col, "", value};
  }

  Token symbol(int col) {
    ++pos_;  // opening quote
    std::size_t start = pos_;
    while (pos_ < text_.size() && is_ident_char(text_[pos_])) ++pos_;
    if (pos_ >= text_.size() || text_[pos_] != '\'' || pos_ == start || !is_ident_start(text_[start])) {
      fail("a symbol literal is an identifier in single quotes, such as 'bf16'", col);
    }
    Token t{Tok::symbol, col, text_.substr(start, pos_ - start), 0};
    ++pos_;  // closing quote
    return t;
  }

  Token punctuation(int col) {
    static const char* const two_char[] = {"==", "!=", "<=", ">=", "&&", "||"};
    for (const char* op : two_char) {
      if (text_.compare(pos_, 2, op) == 0) {
        pos_ += 2;
        return Token{Tok::op, col, op, 0};
      }
    }
    const char c = text_[pos_];
    switch (c) {
      case '+': case '-': case '*': case '/': case '%': case '<': case '>': case '!':
        ++pos_;
        return Token{Tok::op, col, std::string(1, c), 0};
      case '(': ++pos_; return Token{Tok::lparen, col, "(", 0};
      case ')': ++pos_; return Token{Tok::rparen, col, ")", 0};
      case ',': ++pos_; return Token{Tok::comma, col, ",", 0};
      case '?': ++pos_; return Token{Tok::question, col, "?", 0};
      case ':': ++pos_; return Token{Tok::colon, col, ":", 0};
      case '=': fail("unexpected '='; equality is '=='", col);
      case '&': fail("unexpected '&'; logical and is '&&'", col);
      case '|': fail("unexpected '|'; logical or is '||'", col);
      default: break;
    }
    const auto byte = static_cast<unsigned char>(c);
    if (byte >= 0x20 && byte < 0x7f) fail(std::string("unexpected character '") + c + "'", col);
    fail("unexpected byte " + std::to_string(byte), col);
  }

  const std::string& text_;
  std::size_t pos_ = 0;
};

struct BinaryOp {
  const char* spelling;
  Op op;
  int precedence;  // higher binds tighter
};

constexpr BinaryOp kBinaryOps[] = {
    {"||", Op::logical_or, 1},    {"&&", Op::logical_and, 2},     {"==", Op::equal, 3},
    {"!=", Op::not_equal, 3},     {"<", Op::less, 4},             {"<=", Op::less_equal, 4},
    {">", Op::greater, 4},        {">=", Op::greater_equal, 4},   {"+", Op::add, 5},
    {"-", Op::subtract, 5},       {"*", Op::multiply, 6},         {"/", Op::divide, 6},
    {"%", Op::modulo, 6}};

// A syntax tree taller than this is rejected, so that checking, evaluating, printing and
// destroying it (all recursive) cannot exhaust the stack. Height counts every operator on the
// path from the root: parentheses, nested calls and also a chain such as `a + b + c` (left-
// associative, so a chain of n operators is n levels tall).
constexpr int kMaxDepth = kMaxExpressionDepth;

// A subtree and its height (a leaf is 1).
struct Parsed {
  Node node;
  int height = 1;
};

class Parser {
 public:
  Parser(const std::string& text, std::vector<Token> tokens) : text_(text), tokens_(std::move(tokens)) {}

  Node parse_all() {
    if (peek().kind == Tok::end) fail("empty expression", peek().column);
    Parsed root = conditional(0);
    if (peek().kind != Tok::end) fail("unexpected " + describe(peek()) + " after a complete expression", peek().column);
    return std::move(root.node);
  }

 private:
  const Token& peek() const { return tokens_[pos_]; }
  const Token& take() { return tokens_[pos_++]; }

  [[noreturn]] void fail(const std::string& detail, int col) const { throw ExprError(detail, text_, col); }

  static std::string describe(const Token& t) {
    switch (t.kind) {
      case Tok::end: return "end of expression";
      case Tok::integer: return "number " + std::to_string(t.integer);
      case Tok::name: return "name '" + t.text + "'";
      case Tok::symbol: return "symbol '" + t.text + "'";
      default: return "'" + t.text + "'";
    }
  }

  void expect(Tok kind, const char* what) {
    if (peek().kind != kind) fail(std::string("expected ") + what + ", found " + describe(peek()), peek().column);
    ++pos_;
  }

  // `depth` bounds the parser's own recursion (nesting seen from the root); the height check in
  // join() bounds the tree it builds, chains included.
  void enter(int depth, int col) const {
    if (depth > kMaxDepth) fail(too_deep(), col);
  }

  static std::string too_deep() {
    return "expression nested too deeply (more than " + std::to_string(kMaxDepth) +
           " levels; a chain of n operators counts n)";
  }

  // A new node over `operands`, moved (never copied: copying the left operand of a long chain at
  // every operator made parsing quadratic).
  Parsed join(Node node, std::vector<Parsed>& operands) {
    int height = 0;
    node.args.reserve(operands.size());
    for (Parsed& operand : operands) {
      height = std::max(height, operand.height);
      node.args.push_back(std::move(operand.node));
    }
    if (height + 1 > kMaxDepth) fail(too_deep(), node.column);
    return Parsed{std::move(node), height + 1};
  }

  static Node operator_node(NodeKind kind, int column) {
    Node node;
    node.kind = kind;
    node.column = column;
    return node;
  }

  // condition ? then : else, right-associative; the middle operand is a full expression as in C.
  Parsed conditional(int depth) {
    enter(depth, peek().column);
    Parsed cond = binary(1, depth);
    if (peek().kind != Tok::question) return cond;
    Node node = operator_node(NodeKind::conditional, take().column);
    std::vector<Parsed> operands;
    operands.push_back(std::move(cond));
    operands.push_back(conditional(depth + 1));
    expect(Tok::colon, "':' of a conditional expression");
    operands.push_back(conditional(depth + 1));
    return join(std::move(node), operands);
  }

  static const BinaryOp* binary_op(const Token& t) {
    if (t.kind != Tok::op) return nullptr;
    for (const BinaryOp& b : kBinaryOps) {
      if (t.text == b.spelling) return &b;
    }
    return nullptr;
  }

  // Precedence climbing: all binary operators are left-associative.
  Parsed binary(int min_precedence, int depth) {
    Parsed lhs = unary(depth);
    while (const BinaryOp* b = binary_op(peek())) {
      if (b->precedence < min_precedence) break;
      Node node = operator_node(NodeKind::binary, take().column);
      node.op = b->op;
      std::vector<Parsed> operands;
      operands.push_back(std::move(lhs));
      operands.push_back(binary(b->precedence + 1, depth + 1));
      lhs = join(std::move(node), operands);
    }
    return lhs;
  }

  Parsed unary(int depth) {
    enter(depth, peek().column);
    const Token& t = peek();
    if (t.kind == Tok::op && (t.text == "-" || t.text == "!")) {
      Node node = operator_node(NodeKind::unary, t.column);
      node.op = t.text == "-" ? Op::negate : Op::logical_not;
      take();
      std::vector<Parsed> operands;
      operands.push_back(unary(depth + 1));
      return join(std::move(node), operands);
    }
    return primary(depth);
  }

  Parsed primary(int depth) {
    const Token& t = take();
    Node node;
    node.column = t.column;
    switch (t.kind) {
      case Tok::integer:
        node.kind = NodeKind::integer;
        node.integer = t.integer;
        return Parsed{std::move(node), 1};
      case Tok::symbol:
        node.kind = NodeKind::symbol;
        node.text = t.text;
        return Parsed{std::move(node), 1};
      case Tok::name:
        if (peek().kind == Tok::lparen) return call(t, depth);
        node.kind = NodeKind::name;
        node.text = t.text;
        return Parsed{std::move(node), 1};
      case Tok::lparen: {
        Parsed inner = conditional(depth + 1);
        expect(Tok::rparen, "')'");
        return inner;
      }
      default:
        fail("expected a number, a name, a symbol or '(', found " + describe(t), t.column);
    }
  }

  Parsed call(const Token& name, int depth) {
    static constexpr Function kFunctions[] = {Function::min,      Function::max,  Function::ceil_div,
                                              Function::round_up, Function::log2, Function::is_pow2};
    Node node = operator_node(NodeKind::call, name.column);
    node.text = name.text;
    bool known = false;
    for (Function f : kFunctions) {
      if (name.text == function_name(f)) {
        node.function = f;
        known = true;
      }
    }
    if (!known) {
      fail("unknown function '" + name.text + "' (functions: min, max, ceil_div, round_up, log2, is_pow2)",
           name.column);
    }
    expect(Tok::lparen, "'('");
    std::vector<Parsed> operands;
    if (peek().kind != Tok::rparen) {
      operands.push_back(conditional(depth + 1));
      while (peek().kind == Tok::comma) {
        ++pos_;
        operands.push_back(conditional(depth + 1));
      }
    }
    expect(Tok::rparen, "',' or ')'");
    return join(std::move(node), operands);
  }

  const std::string& text_;
  std::vector<Token> tokens_;
  std::size_t pos_ = 0;
};

}  // namespace

Expr Expr::parse(std::string text) {
  // Checked before tokenizing, so that the cost of any text is bounded; the message quotes only
  // the start of the text.
  if (text.size() > kMaxExpressionBytes) {
    throw ExprError("expression is " + std::to_string(text.size()) + " bytes, longer than the " +
                        std::to_string(kMaxExpressionBytes) + " allowed",
                    text, 1);
  }
  std::vector<Token> tokens = Lexer(text).tokens();
  Node root = Parser(text, std::move(tokens)).parse_all();
  return Expr(std::move(text), std::move(root));
}

}  // namespace kiln::model
