#include "usage.hpp"

#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

namespace kiln::cli {
namespace {

std::string subcommand_names(const CLI::App& app) {
  std::string out;
  for (const CLI::App* sub : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (!out.empty()) out += ", ";
    out += sub->get_name();
  }
  return out;
}

// "kiln" or "kiln <subcommand>": who complains.
std::string speaker(const CLI::App& app, const CLI::App* sub) {
  return sub == nullptr ? app.get_name() : app.get_name() + " " + sub->get_name();
}

// A word the parser did not expect: an option it does not know, an unknown subcommand (at the top
// level), or a stray argument.
std::string unexpected(const CLI::App& app, const CLI::App* sub, const std::string& word) {
  const std::string who = speaker(app, sub);
  if (!word.empty() && word[0] == '-') return who + ": unknown option '" + word + "' (see " + who + " --help)";
  if (sub == nullptr) return who + ": unknown subcommand '" + word + "' (subcommands: " + subcommand_names(app) + ")";
  return who + ": unexpected argument '" + word + "' (see " + who + " --help)";
}

// The whole of `text` as an integer of type T, without the silent saturation of strtoll: a value
// out of range is no value.
template <class T>
bool parse_whole(const std::string& text, T& value) {
  const char* end = text.data() + text.size();
  const auto [ptr, ec] = std::from_chars(text.data(), end, value);
  return ec == std::errc() && ptr == end;
}

}  // namespace

std::string usage_message(const CLI::App& app, const CLI::ParseError& error) {
  const CLI::App* sub = nullptr;
  for (const CLI::App* candidate : app.get_subcommands()) sub = candidate;  // the one that was parsed
  const std::vector<std::string> top = app.remaining(false);
  if (!top.empty()) return unexpected(app, nullptr, top.front());
  if (sub != nullptr) {
    const std::vector<std::string> words = sub->remaining(false);
    if (!words.empty()) return unexpected(app, sub, words.front());
  }
  if (sub == nullptr && dynamic_cast<const CLI::RequiredError*>(&error) != nullptr) {
    return app.get_name() + ": a subcommand is required (subcommands: " + subcommand_names(app) + ")";
  }
  return speaker(app, sub) + ": " + error.what();
}

const CLI::Validator& non_empty_path() {
  static const CLI::Validator validator(
      [](std::string& value) { return value.empty() ? std::string("an empty path") : std::string(); }, "PATH");
  return validator;
}

const CLI::Validator& finite_number() {
  static const CLI::Validator validator(
      [](std::string& value) {
        double number = 0;
        if (!CLI::detail::lexical_cast(value, number) || !std::isfinite(number)) {
          return "'" + value + "' is not a finite number";
        }
        return std::string();
      },
      "NUMBER");
  return validator;
}

const CLI::Validator& count() {
  static const CLI::Validator validator(
      [](std::string& value) {
        std::uint64_t n = 0;
        if (!parse_whole(value, n)) {
          return "'" + value + "' is not a whole number from 0 to " +
                 std::to_string(std::numeric_limits<std::uint64_t>::max());
        }
        return std::string();
      },
      "COUNT");
  return validator;
}

const CLI::Validator& positive_id() {
  static const CLI::Validator validator(
      [](std::string& value) {
        std::int64_t id = 0;
        if (!parse_whole(value, id) || id < 1) {
          return "'" + value + "' is not an id (1 to " + std::to_string(std::numeric_limits<std::int64_t>::max()) + ")";
        }
        return std::string();
      },
      "ID");
  return validator;
}

}  // namespace kiln::cli
