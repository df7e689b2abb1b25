#include "report.hpp"

#include <cstdio>
#include <sstream>

#include "domain_report.hpp"
#include "floors.hpp"
#include "kiln/text.hpp"
#include "kiln/worklog/markdown.hpp"

namespace kiln::tuner {
namespace {

std::string us(double s) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%.2f", s * 1e6);
  return buf;
}

std::string ratio_text(double r) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f", r);
  return buf;
}

// Text from a record (it may come from another machine) as one safe table cell or line: no
// control characters or bad UTF-8, no table separator, no HTML.
std::string safe(const std::string& text) {
  std::string out;
  for (char c : kiln::escape_controls(text)) {
    if (c == '|') out += "\\|";
    else if (c == '<') out += "&lt;";
    else out += c;
  }
  return out;
}

}  // namespace

std::string record_markdown(const Record& r, const std::string& svg_dir) {
  std::ostringstream md;
  md << "## " << safe(r.kernel) << " on " << safe(r.device_name);
  if (!r.compute_capability.empty()) md << " (sm " << safe(r.compute_capability) << ")";
  md << "\n\n";
  md << "Tuned " << safe(r.date) << " with " << safe(r.strategy) << " search";
  if (!r.driver.empty()) md << "; driver " << safe(r.driver);
  if (!r.cuda_runtime.empty()) md << ", CUDA " << safe(r.cuda_runtime);
  md << ". Variants: " << safe(r.counts.dump()) << ".\n\n";
  md << "| bucket | problem | winner | time (us) | floor (us) | bound | actual/floor | reading |\n";
  md << "| --- | --- | --- | ---: | ---: | --- | ---: | --- |\n";
  for (const auto& b : r.buckets) {
    if (!b.winner) {
      md << "| " << safe(b.name) << " | | no winner: " << safe(b.reason) << " | | | | | |\n";
      continue;
    }
    for (const auto& p : b.problems) {
      md << "| " << safe(b.name) << " | " << safe(p.problem.key()) << " | " << safe(*b.winner) << " | " << us(p.time_s) << " | ";
      if (p.floor_s > 0) {
        double ratio = p.time_s / p.floor_s;
        md << us(p.floor_s) << " | " << safe(p.bound) << " | " << ratio_text(ratio) << " | " << worklog::floor_reading(ratio) << " |\n";
      } else {
        md << "- | - | - | no floor (no rate for the declared work) |\n";
      }
    }
  }
  md << "\nRunners-up (geometric mean over the bucket's problems):\n\n";
  for (const auto& b : r.buckets) {
    if (!b.winner || b.contenders.empty()) continue;
    md << "- " << safe(b.name) << ": winner " << us(b.time_s) << " us";
    for (const auto& c : b.contenders) {
      char pct[32];
      std::snprintf(pct, sizeof pct, "%+.1f%%", (c.time_s / b.time_s - 1) * 100);
      md << "; " << safe(c.variant) << " " << us(c.time_s) << " us (" << pct << ")";
    }
    md << "\n";
  }
  md << domain_markdown(r, svg_dir);
  return md.str();
}

}  // namespace kiln::tuner
