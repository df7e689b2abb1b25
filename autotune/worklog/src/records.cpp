#include "kiln/worklog/records.hpp"

#include <algorithm>
#include <array>
#include <cstddef>
#include <string>

#include "kiln/error.hpp"

namespace kiln::worklog {

namespace {

// The stored spelling of each enumerator, in declaration order.
constexpr std::array<std::string_view, 4> verdict_names{"keep", "revert", "invalid", "failed"};
constexpr std::array<std::string_view, 7> failure_kind_names{
    "constraint", "compile", "crash", "timeout", "runtime", "correctness", "sanitizer"};
constexpr std::array<std::string_view, 2> author_names{"kiln", "person"};
constexpr std::array<std::string_view, 6> link_kind_names{"enables",     "blocks",   "similar",
                                                          "contradicts", "supports", "refines"};
constexpr std::array<std::string_view, 2> phase_names{"check", "bench"};
constexpr std::array<std::string_view, 2> status_names{"ok", "failed"};

template <class Enum, std::size_t N>
std::string_view name_of(Enum value, const std::array<std::string_view, N>& names,
                         std::string_view what) {
  const auto index = static_cast<std::size_t>(value);
  if (index >= N) {
    throw Error("invalid " + std::string(what) + " value " + std::to_string(index));
  }
  return names[index];
}

template <class Enum, std::size_t N>
Enum parse(std::string_view text, const std::array<std::string_view, N>& names,
           std::string_view what) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == text) return static_cast<Enum>(i);
  }
  std::string expected;
  for (std::size_t i = 0; i < N; ++i) {
    if (i > 0) expected += i + 1 == N ? " or " : ", ";
    expected += names[i];
  }
  throw Error("unknown " + std::string(what) + " '" + std::string(text) + "' (expected " +
              expected + ")");
}

bool is_tag_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.' ||
         c == ':' || c == '/' || c == '+';
}

std::string_view trim(std::string_view text) {
  const auto space = [](char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; };
  while (!text.empty() && space(text.front())) text.remove_prefix(1);
  while (!text.empty() && space(text.back())) text.remove_suffix(1);
  return text;
}

}  // namespace

std::string_view to_string(Verdict value) { return name_of(value, verdict_names, "verdict"); }
std::string_view to_string(FailureKind value) {
  return name_of(value, failure_kind_names, "failure kind");
}
std::string_view to_string(Author value) { return name_of(value, author_names, "author"); }
std::string_view to_string(LinkKind value) { return name_of(value, link_kind_names, "link kind"); }
std::string_view to_string(Phase value) { return name_of(value, phase_names, "phase"); }
std::string_view to_string(MeasurementStatus value) {
  return name_of(value, status_names, "measurement status");
}

Verdict parse_verdict(std::string_view text) {
  return parse<Verdict>(text, verdict_names, "verdict");
}
FailureKind parse_failure_kind(std::string_view text) {
  return parse<FailureKind>(text, failure_kind_names, "failure kind");
}
Author parse_author(std::string_view text) { return parse<Author>(text, author_names, "author"); }
LinkKind parse_link_kind(std::string_view text) {
  return parse<LinkKind>(text, link_kind_names, "link kind");
}
Phase parse_phase(std::string_view text) { return parse<Phase>(text, phase_names, "phase"); }
MeasurementStatus parse_measurement_status(std::string_view text) {
  return parse<MeasurementStatus>(text, status_names, "measurement status");
}

std::vector<std::string> normalise_tags(const std::vector<std::string>& tags) {
  std::vector<std::string> out;
  for (const std::string& raw : tags) {
    const std::string_view trimmed = trim(raw);
    if (trimmed.empty()) continue;
    std::string tag;
    for (char c : trimmed) {
      const char lower = (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c;
      if (!is_tag_char(lower)) {
        throw Error("tag '" + std::string(trimmed) +
                    "' may hold only letters, digits and _ - . : / +");
      }
      tag += lower;
    }
    out.push_back(std::move(tag));
  }
  std::sort(out.begin(), out.end());
  out.erase(std::unique(out.begin(), out.end()), out.end());
  return out;
}

std::vector<std::string> normalise_tags(std::string_view comma_separated) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= comma_separated.size()) {
    const std::size_t comma = comma_separated.find(',', start);
    const std::size_t end = comma == std::string_view::npos ? comma_separated.size() : comma;
    parts.emplace_back(comma_separated.substr(start, end - start));
    start = end + 1;
  }
  return normalise_tags(parts);
}

}  // namespace kiln::worklog
