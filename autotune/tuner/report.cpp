#include "report.hpp"

#include <algorithm>
#include <cstdio>
#include <sstream>

#include "bottleneck.hpp"
#include "domain_report.hpp"
#include "floors.hpp"
#include "numbers.hpp"
#include "kiln/model/json_reader.hpp"
#include "kiln/text.hpp"
#include "kiln/worklog/markdown.hpp"

namespace kiln::tuner {

namespace {

// Seconds as microseconds with two decimals, for the table's "(us)" columns.
std::string microseconds(double s) { return fixed(s * 1e6, 2); }

std::string percent(const std::optional<double>& v) {
  if (!v) return "-";
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.0f%%", *v);
  return buf;
}

// The newest profile of the variant on the problem, whatever its source fingerprint.
std::optional<worklog::Profile> newest_profile(const std::vector<worklog::Profile>& all, const std::string& variant,
                                               const std::string& problem) {
  std::optional<worklog::Profile> best;
  auto when = [](const worklog::Profile& p) { return std::max(p.profiled_at, p.launches_at); };
  for (const auto& p : all) {
    if (p.key.variant != variant || p.key.problem_key != problem) continue;
    if (!best || when(p) > when(*best)) best = p;
  }
  return best;
}

// One table row of a variant on a problem.
std::string bottleneck_row(const std::string& bucket, const std::string& problem, const std::string& variant,
                           const std::string& role, const std::optional<worklog::Profile>& profile) {
  std::ostringstream md;
  md << "| " << markdown_cell(bucket) << " | " << markdown_cell(problem) << " | " << markdown_cell(variant) << " (" << role << ") | ";
  if (!profile) {
    md << "- | - | - | - | - | - | - | not profiled, no launch shape recorded |\n";
    return md.str();
  }
  // The metrics kiln profile measured, else the launch shapes recorded while timing; a stored
  // profile that does not read is said in the row, with why.
  std::vector<KernelMetrics> launches;
  std::string source;
  try {
    if (!profile->metrics.empty()) {
      for (const auto& l : parse_stored_launches(profile->metrics, "the metrics of " + variant)) {
        launches.push_back(metrics_from_ncu(l));
      }
      source = "ncu";
    }
    if (launches.empty() && !profile->launches.empty()) {
      const model::JsonFile stored = model::parse_json_text("the launch shapes of " + variant, profile->launches);
      for (const auto& s : model::launch_shapes_from_json(model::JsonNode::root(stored))) {
        launches.push_back(metrics_from_shape(s, profile->sm_count));
      }
      source = "launch shape";
    }
  } catch (const model::InputError& e) {
    md << "- | - | - | - | - | - | - | " << markdown_cell(std::string("unread: ") + e.what()) << " |\n";
    return md.str();
  }
  if (launches.empty()) {
    md << "- | - | - | - | - | - | - | nothing recorded |\n";
    return md.str();
  }
  const KernelMetrics& m = launches[dominant_launch(launches)];
  const Bottleneck b = classify(m);
  std::string shape = "-";
  if (m.ctas) {
    shape = fixed(*m.ctas, 0) + " CTAs";
    if (m.sm_count) shape += " / " + fixed(*m.sm_count, 0) + " SMs";
    if (m.ctas_per_sm && m.sm_count) shape += ", " + fixed(*m.ctas / (*m.ctas_per_sm * *m.sm_count), 2) + " waves";
  }
  std::string occupancy = percent(m.achieved_occupancy_pct);
  if (m.theoretical_occupancy_pct) occupancy += " of " + percent(m.theoretical_occupancy_pct);
  std::string registers = m.registers ? fixed(*m.registers, 0) : "-";
  if (m.local_instructions && *m.local_instructions > 0) registers += ", " + fixed(*m.local_instructions, 0) + " local ld/st";
  if (m.local_bytes && *m.local_bytes > 0) registers += ", " + fixed(*m.local_bytes, 0) + " B local";
  std::string stall = m.stalls.empty() ? "-" : m.stalls.front().first;
  // Flags of every launch, named when the run has several.
  std::string flags;
  for (const auto& l : launches) {
    for (const auto& f : launch_flags(l)) {
      flags += (flags.empty() ? "" : "; ") + (launches.size() > 1 && !l.kernel.empty() ? l.kernel + ": " : std::string()) + f;
    }
  }
  md << percent(m.sm_pct) << " | " << percent(m.memory_pct) << " (DRAM " << percent(m.dram_pct) << ") | " << occupancy
     << " | " << markdown_cell(registers) << " | " << markdown_cell(shape) << " | " << markdown_cell(stall) << " | **" << to_string(b.kind) << "** ("
     << markdown_cell(source) << "): " << markdown_cell(b.reason);
  if (!flags.empty() && flags != b.reason) md << "; flags: " << markdown_cell(flags);
  md << " |\n";
  return md.str();
}

}  // namespace

std::string bottleneck_markdown(const Record& r, const worklog::Worklog& log, int runners_up) {
  const std::vector<worklog::Profile> all = log.profiles(r.context_key, r.kernel);
  std::ostringstream md;
  md << "### Bottlenecks of " << markdown_cell(r.kernel) << "\n\n";
  md << "By the method's hierarchy: parallelism, memory, compute, instructions (kiln profile; README, \"kiln "
        "profile\"). Throughputs are % of peak; the dominant launch of each run.\n\n";
  md << "| bucket | problem | variant | SM | memory | occupancy | registers | launch | top stall | bottleneck |\n";
  md << "| --- | --- | --- | ---: | ---: | ---: | --- | --- | --- | --- |\n";
  for (const auto& b : r.buckets) {
    if (!b.winner) continue;
    std::vector<std::pair<std::string, std::string>> candidates = {{*b.winner, "winner"}};
    for (std::size_t k = 0; k < b.contenders.size() && k < static_cast<std::size_t>(std::max(runners_up, 0)); ++k) {
      candidates.emplace_back(b.contenders[k].variant, "runner-up " + std::to_string(k + 1));
    }
    for (const auto& p : b.problems) {
      for (const auto& [variant, role] : candidates) {
        md << bottleneck_row(b.name, p.problem.key(), variant, role, newest_profile(all, variant, p.problem.key()));
      }
    }
  }
  return md.str();
}

std::string record_markdown(const Record& r, const std::string& svg_dir) {
  std::ostringstream md;
  md << "## " << markdown_cell(r.kernel) << " on " << markdown_cell(r.device_name);
  if (!r.compute_capability.empty()) md << " (sm " << markdown_cell(r.compute_capability) << ")";
  md << "\n\n";
  md << "Tuned " << markdown_cell(r.date) << " with " << markdown_cell(r.strategy) << " search";
  if (!r.driver.empty()) md << "; driver " << markdown_cell(r.driver);
  if (!r.cuda_runtime.empty()) md << ", CUDA " << markdown_cell(r.cuda_runtime);
  md << ". Variants: " << markdown_cell(r.counts.dump()) << ".\n\n";
  // A learned dispatch has no buckets: its figures are the domain's, below.
  if (!r.buckets.empty()) {
    md << "| bucket | problem | winner | time (us) | floor (us) | bound | actual/floor | reading |\n";
    md << "| --- | --- | --- | ---: | ---: | --- | ---: | --- |\n";
  }
  for (const auto& b : r.buckets) {
    if (!b.winner) {
      md << "| " << markdown_cell(b.name) << " | | no winner: " << markdown_cell(b.reason) << " | | | | | |\n";
      continue;
    }
    for (const auto& p : b.problems) {
      md << "| " << markdown_cell(b.name) << " | " << markdown_cell(p.problem.key()) << " | " << markdown_cell(*b.winner) << " | " << microseconds(p.time_s) << " | ";
      if (p.floor_s > 0) {
        double ratio = p.time_s / p.floor_s;
        md << microseconds(p.floor_s) << " | " << markdown_cell(p.bound) << " | " << fixed(ratio, 2) << " | " << worklog::floor_reading(ratio) << " |\n";
      } else {
        md << "- | - | - | no floor (no rate for the declared work) |\n";
      }
    }
  }
  if (!r.buckets.empty()) md << "\nRunners-up (geometric mean over the bucket's problems):\n\n";
  for (const auto& b : r.buckets) {
    if (!b.winner || b.contenders.empty()) continue;
    md << "- " << markdown_cell(b.name) << ": winner " << us(b.time_s);
    for (const auto& c : b.contenders) {
      char pct[32];
      std::snprintf(pct, sizeof pct, "%+.1f%%", (c.time_s / b.time_s - 1) * 100);
      md << "; " << markdown_cell(c.variant) << " " << us(c.time_s) << " (" << pct << ")";
    }
    md << "\n";
  }
  md << domain_markdown(r, svg_dir);
  return md.str();
}

}  // namespace kiln::tuner
