#include "report.hpp"

#include <cstdio>
#include <sstream>

#include "floors.hpp"
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

}  // namespace

std::string record_markdown(const Record& r) {
  std::ostringstream md;
  md << "## " << r.kernel << " on " << r.device_name;
  if (!r.compute_capability.empty()) md << " (sm " << r.compute_capability << ")";
  md << "\n\n";
  md << "Tuned " << r.date << " with " << r.strategy << " search";
  if (!r.driver.empty()) md << "; driver " << r.driver;
  if (!r.cuda_runtime.empty()) md << ", CUDA " << r.cuda_runtime;
  md << ". Variants: " << r.counts.dump() << ".\n\n";
  md << "| bucket | problem | winner | time (us) | floor (us) | bound | actual/floor | reading |\n";
  md << "| --- | --- | --- | ---: | ---: | --- | ---: | --- |\n";
  for (const auto& b : r.buckets) {
    if (!b.winner) {
      md << "| " << b.name << " | | no winner: " << b.reason << " | | | | | |\n";
      continue;
    }
    for (const auto& p : b.problems) {
      md << "| " << b.name << " | " << p.problem.key() << " | " << *b.winner << " | " << us(p.time_s) << " | ";
      if (p.floor_s > 0) {
        double ratio = p.time_s / p.floor_s;
        md << us(p.floor_s) << " | " << p.bound << " | " << ratio_text(ratio) << " | " << worklog::floor_reading(ratio) << " |\n";
      } else {
        md << "- | - | - | no floor (no rate for the declared work) |\n";
      }
    }
  }
  md << "\nRunners-up (geometric mean over the bucket's problems):\n\n";
  for (const auto& b : r.buckets) {
    if (!b.winner || b.contenders.empty()) continue;
    md << "- " << b.name << ": winner " << us(b.time_s) << " us";
    for (const auto& c : b.contenders) {
      char pct[32];
      std::snprintf(pct, sizeof pct, "%+.1f%%", (c.time_s / b.time_s - 1) * 100);
      md << "; " << c.variant << " " << us(c.time_s) << " us (" << pct << ")";
    }
    md << "\n";
  }
  return md.str();
}

}  // namespace kiln::tuner
