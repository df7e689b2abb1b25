// A kernel source as the compiler reads it, for the context's code key: comments and the layout
// of whitespace taken out, so that rewording a comment or re-indenting a file does not make every
// measurement of a space stale (a context key hashes the sources' bytes: one changed comment in
// an attention header made four spaces' measurements, twenty minutes of two GPUs, unreachable).
#pragma once
#include <filesystem>
#include <string>
#include <string_view>

namespace kiln::tuner {

// The text of C, C++ or CUDA source with each comment replaced by one space (as the
// preprocessor replaces it) and every run of whitespace made one space, or one newline where a
// preprocessor directive ends or begins (a directive is a line), none at the start or the end: a
// statement split over other lines is the same code. String,
// character and raw string literals are kept byte for byte, a digit separator (1'000) is no
// character literal. Malformed input (an unterminated comment or literal) is taken as it comes:
// an unterminated comment runs to the end, an unterminated literal to the end of its line.
std::string code_text(std::string_view source);

// Whether a file is C, C++ or CUDA by its extension (.c .cc .cpp .cxx .h .hh .hpp .hxx .cu .cuh
// .inl .ipp .tpp, any case): the sources whose code_text the code key takes; others by their
// bytes.
bool is_c_family_source(const std::filesystem::path& file);

}  // namespace kiln::tuner
