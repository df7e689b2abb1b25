#include "publish.hpp"

#include <algorithm>
#include <ostream>
#include <string>

#include "domain_report.hpp"
#include "header.hpp"
#include "kiln/worklog/markdown.hpp"
#include "numbers.hpp"

namespace kiln::tuner {

void publish(const Manifest& m, const Record& record, const PublishPaths& paths, std::ostream& out, std::ostream& err) {
  const std::string text = record_text(record);
  write_if_changed(paths.record, text);
  for (const auto& copy : paths.record_copies) {
    if (write_if_changed(copy, text)) out << "kiln: wrote " << copy.string() << "\n";
  }
  if (!paths.header) return;
  std::vector<std::string> warnings;
  write_if_changed(*paths.header, dispatch_header(m, record, warnings));
  for (const auto& w : warnings) err << "kiln: warning: " << w << "\n";
}

void print_summary(const Manifest& m, const Record& record, std::size_t evaluated, std::size_t ran, std::ostream& out) {
  const std::size_t passed = record.counts.value("passed", std::size_t{0});
  const std::size_t invalid = record.counts.value("invalid", std::size_t{0});
  const std::size_t failed = record.counts.value("failed", std::size_t{0});
  out << "kiln: " << m.kernel << " on " << record.device_name << ": " << evaluated << " evaluated, " << passed
      << " passed, " << invalid << " wrong, " << failed << " failed to build or run; " << ran << " measured now\n";
  for (const auto& rb : record.buckets) {
    if (!rb.winner) {
      out << "  " << rb.name << ": no winner (" << rb.reason << ")\n";
      continue;
    }
    out << "  " << rb.name << ": " << *rb.winner;
    if (rb.noise) out << " (noise " << fixed(*rb.noise * 100, 1) << "%)";
    out << "\n";
    if (!rb.choice.empty()) out << "    " << rb.choice << "\n";
    for (const auto& c : rb.contenders) {
      if (!c.within_noise.value_or(false)) continue;
      out << "    tie within noise: " << c.variant << " " << fixed((c.time_s / rb.time_s - 1) * 100, 1) << "% (noise "
          << fixed(std::max(*c.noise, *rb.noise) * 100, 1) << "%)\n";
    }
    for (const auto& p : rb.problems) {
      out << "    " << p.problem.key() << ": " << us(p.time_s);
      if (p.floor_s > 0) {
        double ratio = p.time_s / p.floor_s;
        out << ", floor " << us(p.floor_s) << " (" << p.bound << "), " << fixed(ratio, 2) << "x " << worklog::floor_reading(ratio);
      }
      out << "\n";
    }
  }
  if (record.domain) out << domain_summary(*record.domain);
}

}  // namespace kiln::tuner
