// code_text: what of a C, C++ or CUDA source the code key hashes, comments and layout out.
#include <initializer_list>

#include "code_text.hpp"
#include "kiln_catch.hpp"

using kiln::tuner::code_text;
using kiln::tuner::is_c_family_source;

TEST_CASE("comments and the layout of whitespace are out of the code text, the code is not") {
  const std::string source =
      "// The kernel's tile.\n"
      "#include \"a.hpp\"\n"
      "\n"
      "/* a block\n   comment */ template <int N>\n"
      "struct   Tile {   // trailing\n"
      "\tstatic constexpr int size = N * 2;\n"
      "};\n";
  CHECK(code_text(source) ==
        "#include \"a.hpp\"\n"
        "template <int N> struct Tile { static constexpr int size = N * 2; };");
  // A reworded comment, one more comment line, other indentation, CRLF line ends: the same code.
  const std::string reworded =
      "// The kernel's tile, reworded\n// over two lines.\n"
      "#include \"a.hpp\"\n"
      "/* another */ template <int N>\r\n"
      "  struct Tile {\r\n"
      "    static constexpr int size = N * 2;  /* why */\r\n"
      "};\r\n";
  CHECK(code_text(reworded) == code_text(source));
  // Code changes are changes, however small.
  CHECK(code_text("int size = N * 2;") != code_text("int size = N * 3;"));
  CHECK(code_text("a b") != code_text("ab"));
  // A comment is one space, as the preprocessor reads it: a/**/b is two tokens.
  CHECK(code_text("a/**/b") == "a b");
  // Preprocessor directives stay lines; a statement over several lines is the same statement.
  CHECK(code_text("#define A 1\n#define B 2") == "#define A 1\n#define B 2");
  CHECK(code_text("#define A 1  // one\n\n\n#define B 2") == "#define A 1\n#define B 2");
  CHECK(code_text("int a =\n  1;\n  #if X\nint b;\n#endif\nint c;") == "int a = 1;\n#if X\nint b;\n#endif\nint c;");
  CHECK(code_text("#define F(x) \\\n  (x + 1)\nint y;") == "#define F(x) \\\n(x + 1)\nint y;");
  CHECK(code_text("#define A 1\nint b;") != code_text("#define A 1 int b;"));
  CHECK(code_text("a # b") == "a # b");
}

namespace {

// A source and its code text.
struct Case {
  const char* source;
  const char* code;
};

void check_cases(std::initializer_list<Case> cases) {
  for (const Case& c : cases) {
    INFO(c.source);
    CHECK(code_text(c.source) == c.code);
  }
}

}  // namespace

TEST_CASE("literals are kept byte for byte: what looks like a comment in one is text") {
  check_cases({
      {"const char* s = \"a // b /* c */  d\";  // e", "const char* s = \"a // b /* c */  d\";"},
      {"char c = '/'; char d = '\\''; // x", "char c = '/'; char d = '\\'';"},
      {"auto s = \"q\\\"  // still text\";", "auto s = \"q\\\"  // still text\";"},
      {"auto r = R\"x(a // b\n  c)x\"; // d", "auto r = R\"x(a // b\n  c)x\";"},
      {"auto r = u8R\"(/* kept */)\";", "auto r = u8R\"(/* kept */)\";"},
      // A digit separator opens no character literal: the comment after it is still a comment.
      {"int n = 1'000'000; // a million, 'quoted'", "int n = 1'000'000;"},
      {"auto c = L'x';  // wide", "auto c = L'x';"},
      // An R that ends an identifier, and a space before a quote: ordinary strings.
      {"FOR \"  a  \"", "FOR \"  a  \""},
      {"R \"(  // x\"", "R \"(  // x\""},
  });
}

TEST_CASE("malformed sources are read to the end without a fault") {
  check_cases({
      {"", ""},
      {"   \n\t ", ""},
      {"a /* never closed", "a"},
      {"a // no newline", "a"},
      {"s = \"never closed\nb", "s = \"never closed b"},
      {"c = '", "c = '"},
      {"r = R\"d(never closed", "r = R\"d(never closed"},
      {"x \\", "x \\"},
      // A line comment that a backslash continues takes the next line too.
      {"a // one \\\n two\nb", "a b"},
  });
  // Bytes that are no text go through as they are.
  const std::string bytes("a\0b\xff", 4);
  CHECK(code_text(bytes) == bytes);
}

TEST_CASE("C, C++ and CUDA sources are known by their extension") {
  for (const char* name : {"k.cu", "k.cuh", "k.hpp", "k.H", "k.cpp", "k.cc", "k.c", "k.h", "k.inl", "k.CUH"}) {
    CHECK(is_c_family_source(name));
  }
  for (const char* name : {"k.json", "k.py", "CMakeLists.txt", "k", "k.cu.in"}) CHECK_FALSE(is_c_family_source(name));
}
