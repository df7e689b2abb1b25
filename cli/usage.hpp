// Usage errors of the `kiln` command: exit code 2 and one message naming the word that is wrong
// (an unknown subcommand or option, a missing option, a value out of range), as command-line
// conventions expect. Errors of the work itself exit 1.
#pragma once
#include <string>

#include <CLI/CLI.hpp>

namespace kiln::cli {

inline constexpr int kUsageExitCode = 2;
// The machine is not fit to measure on (kiln preflight's "refuse", a tuning the preflight refused).
inline constexpr int kRefusedExitCode = 3;

// The message for a parse error of `app`: unexpected words are named before anything else (CLI11
// reports a missing required option first, which hides a misspelt one).
std::string usage_message(const CLI::App& app, const CLI::ParseError& error);

// Validators of option values.
const CLI::Validator& non_empty_path();  // "" is not a path
const CLI::Validator& finite_number();   // not NaN or infinite
const CLI::Validator& positive_id();     // a row id: 1 to 2^63 - 1
const CLI::Validator& count();           // a whole number: 0 to 2^64 - 1

}  // namespace kiln::cli
