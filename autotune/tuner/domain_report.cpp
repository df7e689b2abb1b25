#include "domain_report.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <vector>

#include "domain.hpp"
#include "kiln/text.hpp"
#include "numbers.hpp"
#include "kiln/worklog/markdown.hpp"

namespace kiln::tuner {

namespace {

// Held-out points whose floor is at least this are the ones the targets are about: below
// it, launch latency rather than the kernel's work sets the time.
constexpr double kLargeFloorSeconds = 10e-6;



// Text inside SVG: the five characters XML gives meaning to, escaped.
std::string xml(const std::string& text) {
  std::string out;
  for (char c : kiln::escape_controls(text)) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string figures_line(const DomainFigures& f) {
  std::ostringstream s;
  s << f.points << " points: regret median " << fixed(f.median_regret, 3) << ", worst " << fixed(f.worst_regret, 3);
  if (f.with_floor > 0) {
    s << "; actual/floor median " << fixed(f.median_ratio, 2) << ", worst " << fixed(f.worst_ratio, 2);
  }
  return s.str();
}

std::vector<const HeldOutPoint*> worst_points(const RecordedDomain& d, bool by_regret, std::size_t count) {
  std::vector<const HeldOutPoint*> points;
  for (const auto& p : d.held_out) {
    if (by_regret || p.floor_s > 0) points.push_back(&p);
  }
  std::stable_sort(points.begin(), points.end(), [&](const auto* a, const auto* b) {
    return by_regret ? a->regret() > b->regret() : a->ratio() > b->ratio();
  });
  if (points.size() > count) points.resize(count);
  return points;
}

// The two int dims the heat map is drawn over: the first two of the points' dims.
std::vector<std::string> int_dims(const RecordedDomain& d) {
  std::vector<std::string> dims;
  if (d.held_out.empty()) return dims;
  for (const auto& [name, value] : d.held_out.front().problem.dims()) {
    if (std::holds_alternative<std::int64_t>(value) && dims.size() < 2) dims.push_back(name);
  }
  return dims;
}

// Green at `good`, red at `bad` and beyond, on a log scale between.
std::string colour(double value, double good, double bad) {
  double t = std::clamp(std::log(std::max(value, good) / good) / std::log(bad / good), 0.0, 1.0);
  char buf[48];
  std::snprintf(buf, sizeof buf, "hsl(%d, 70%%, 45%%)", static_cast<int>(std::lround(120 * (1 - t))));
  return buf;
}

}  // namespace

DomainFigures domain_figures(const RecordedDomain& d, double min_floor_s) {
  DomainFigures f;
  std::vector<double> regrets, ratios;
  for (const auto& p : d.held_out) {
    if (min_floor_s > 0 && p.floor_s < min_floor_s) continue;
    regrets.push_back(p.regret());
    if (p.floor_s > 0) ratios.push_back(p.ratio());
  }
  f.points = regrets.size();
  f.with_floor = ratios.size();
  if (!regrets.empty()) {
    f.median_regret = median(regrets);
    f.worst_regret = *std::max_element(regrets.begin(), regrets.end());
  }
  if (!ratios.empty()) {
    f.median_ratio = median(ratios);
    f.worst_ratio = *std::max_element(ratios.begin(), ratios.end());
  }
  return f;
}

namespace {

// "2 problems dispatched exactly, ahead of the tree (its variant 1.21-1.62x slower there)".
std::string listed_line(const RecordedDomain& d) {
  double low = 0, high = 0;
  for (const auto& l : d.listed) {
    const double r = l.tree_s / l.time_s;
    low = low == 0 ? r : std::min(low, r);
    high = std::max(high, r);
  }
  std::ostringstream s;
  s << d.listed.size() << " problem" << (d.listed.size() == 1 ? "" : "s")
    << " dispatched exactly, ahead of the tree (its variant " << fixed(low, 2);
  if (high > low) s << "-" << fixed(high, 2);
  s << "x slower there)";
  return s.str();
}

// ", N of them past a variant's reach" when the tree has leaves without coverage points
// (tuning.reach), else nothing.
std::string past_reach(const DispatchTree& tree) {
  const auto n = std::count_if(tree.nodes.begin(), tree.nodes.end(),
                               [](const TreeNode& node) { return node.is_leaf() && node.points == 0; });
  return n == 0 ? "" : ", " + std::to_string(n) + " of them past a variant's reach";
}

}  // namespace

std::string domain_summary(const RecordedDomain& d) {
  std::ostringstream s;
  s << "  domain: " << d.coverage_points << " coverage points";
  if (d.refine_points > 0) s << " (" << d.refine_points << " of them refinement points)";
  s << ", dispatch regret there median "
    << fixed(d.coverage_median_regret, 3) << ", worst " << fixed(d.coverage_worst_regret, 3) << " (tolerance "
    << fixed(d.tolerance, 2) << ")";
  if (d.tree) {
    s << "; learned dispatch of " << d.tree->leaf_count() << " leaves" << past_reach(*d.tree) << ", depth "
      << d.tree->depth();
    if (d.tree->min_leaf_points != 1) s << ", at least " << d.tree->min_leaf_points << " points a leaf";
  }
  s << "\n  held out: " << figures_line(domain_figures(d)) << " (" << d.finalists.size() << " finalists timed)\n";
  if (!d.listed.empty()) s << "  listed: " << listed_line(d) << "\n";
  return s.str();
}

std::string domain_markdown(const Record& r, const std::string& svg_dir) {
  if (!r.domain) return "";
  const RecordedDomain& d = *r.domain;
  std::ostringstream md;
  md << "\n### Over the problem domain\n\n";
  md << "The dispatch " << (d.tree ? "learned from" : "of the space's buckets, checked at") << " " << d.coverage_points
     << " coverage points" << (d.refine_points > 0 ? " (" + std::to_string(d.refine_points) + " of them refinement points)" : "")
     << " (tolerance " << fixed(d.tolerance, 2) << "x of each point's fastest variant): regret there median "
     << fixed(d.coverage_median_regret, 3) << ", worst " << fixed(d.coverage_worst_regret, 3);
  if (d.tree) md << "; " << d.tree->leaf_count() << " leaves" << past_reach(*d.tree) << ", depth " << d.tree->depth();
  if (!d.listed.empty()) md << ". Listed problems: " << listed_line(d);
  md << ".\n\nOn the " << d.held_out.size() << " held-out points, never tuned on, against the fastest of "
     << d.finalists.size() << " finalists:\n\n";
  md << "| points | count | regret median | regret worst | actual/floor median | actual/floor worst |\n";
  md << "| --- | ---: | ---: | ---: | ---: | ---: |\n";
  auto row = [&](const std::string& label, const DomainFigures& f) {
    // No point in the row (no floor of 10 us among the held-out points): no figure either.
    const bool any = f.points > 0;
    md << "| " << label << " | " << f.points << " | " << (any ? fixed(f.median_regret, 3) : "-") << " | "
       << (any ? fixed(f.worst_regret, 3) : "-") << " | " << (any && f.with_floor ? fixed(f.median_ratio, 2) : "-")
       << " | " << (any && f.with_floor ? fixed(f.worst_ratio, 2) : "-") << " |\n";
  };
  row("all", domain_figures(d));
  row("floor >= 10 us", domain_figures(d, kLargeFloorSeconds));
  for (bool by_regret : {true, false}) {
    const auto worst = worst_points(d, by_regret, 5);
    if (worst.empty()) continue;
    md << "\nWorst by " << (by_regret ? "regret" : "actual/floor") << ":\n\n";
    md << "| problem | dispatched | time (us) | fastest finalist | time (us) | regret | floor (us) | actual/floor | reading |\n";
    md << "| --- | --- | ---: | --- | ---: | ---: | ---: | ---: | --- |\n";
    for (const auto* p : worst) {
      md << "| " << markdown_cell(p->problem.key()) << " | " << markdown_cell(p->dispatched) << " | " << fixed(p->dispatched_s * 1e6, 2) << " | "
         << markdown_cell(p->best) << " | " << fixed(p->best_s * 1e6, 2) << " | " << fixed(p->regret(), 3) << " | ";
      if (p->floor_s > 0) {
        md << fixed(p->floor_s * 1e6, 2) << " | " << fixed(p->ratio(), 2) << " | " << worklog::floor_reading(p->ratio()) << " |\n";
      } else {
        md << "- | - | no floor |\n";
      }
    }
  }
  if (!svg_dir.empty() && !int_dims(d).empty()) {
    const std::string base = svg_dir + "/" + r.kernel;
    md << "\n![actual/floor over the held-out points](" << markdown_cell(base) << "_floor.svg)\n";
    md << "![regret over the held-out points](" << markdown_cell(base) << "_regret.svg)\n";
  }
  return md.str();
}

std::string heat_map_svg(const Record& r, bool regret) {
  if (!r.domain) return "";
  const RecordedDomain& d = *r.domain;
  const std::vector<std::string> dims = int_dims(d);
  if (dims.empty()) return "";
  constexpr double width = 560, height = 420, left = 70, right = 130, top = 40, bottom = 60;
  const double plot_w = width - left - right, plot_h = height - top - bottom;
  auto log2_of = [&](const HeldOutPoint& p, std::size_t axis) {
    return axis < dims.size() ? std::log2(static_cast<double>(p.problem.i(dims[axis]))) : 0.0;
  };
  double lo[2] = {1e300, 1e300}, hi[2] = {-1e300, -1e300};
  for (const auto& p : d.held_out) {
    if (!regret && p.floor_s <= 0) continue;
    for (std::size_t a = 0; a < 2; ++a) {
      lo[a] = std::min(lo[a], std::floor(log2_of(p, a)));
      hi[a] = std::max(hi[a], std::ceil(log2_of(p, a)));
    }
  }
  for (std::size_t a = 0; a < 2; ++a) {
    if (lo[a] > hi[a]) lo[a] = hi[a] = 0;
    if (hi[a] <= lo[a]) hi[a] = lo[a] + 1;
  }
  auto x_of = [&](double v) { return left + (v - lo[0]) / (hi[0] - lo[0]) * plot_w; };
  auto y_of = [&](double v) { return top + plot_h - (v - lo[1]) / (hi[1] - lo[1]) * plot_h; };
  const double good = 1, bad = regret ? std::max(1.5, d.tolerance * 1.2) : 4;
  const std::string what = regret ? "regret (dispatched / fastest finalist)" : "actual/floor of the dispatched variant";

  std::ostringstream s;
  s << "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"" << width << "\" height=\"" << height << "\" font-family=\"sans-serif\" font-size=\"12\">\n";
  s << "<title>" << xml(r.kernel + " on " + r.device_name + ": " + what) << "</title>\n";
  s << "<text x=\"" << left << "\" y=\"24\" font-size=\"14\">" << xml(r.kernel + ", held-out points: " + what) << "</text>\n";
  s << "<rect x=\"" << left << "\" y=\"" << top << "\" width=\"" << plot_w << "\" height=\"" << plot_h
    << "\" fill=\"none\" stroke=\"#888\"/>\n";
  for (std::size_t a = 0; a < dims.size(); ++a) {
    const int step = std::max(1, static_cast<int>(std::ceil((hi[a] - lo[a]) / 10)));
    for (int k = static_cast<int>(lo[a]); k <= static_cast<int>(hi[a]); k += step) {
      if (a == 0) {
        s << "<text x=\"" << x_of(k) << "\" y=\"" << top + plot_h + 16 << "\" text-anchor=\"middle\">2^" << k << "</text>\n";
      } else {
        s << "<text x=\"" << left - 6 << "\" y=\"" << y_of(k) + 4 << "\" text-anchor=\"end\">2^" << k << "</text>\n";
      }
    }
  }
  s << "<text x=\"" << left + plot_w / 2 << "\" y=\"" << height - 20 << "\" text-anchor=\"middle\">" << xml(dims[0])
    << " (log2)</text>\n";
  if (dims.size() > 1) {
    s << "<text x=\"16\" y=\"" << top + plot_h / 2 << "\" transform=\"rotate(-90 16 " << top + plot_h / 2
      << ")\" text-anchor=\"middle\">" << xml(dims[1]) << " (log2)</text>\n";
  }
  for (const auto& p : d.held_out) {
    if (!regret && p.floor_s <= 0) continue;
    const double value = regret ? p.regret() : p.ratio();
    s << "<rect x=\"" << x_of(log2_of(p, 0)) - 5 << "\" y=\"" << y_of(log2_of(p, 1)) - 5
      << "\" width=\"10\" height=\"10\" fill=\"" << colour(value, good, bad) << "\"><title>"
      << xml(p.problem.key() + ": " + fixed(value, 3)) << "</title></rect>\n";
  }
  // The legend: the colour scale from `good` to `bad`.
  for (int i = 0; i <= 4; ++i) {
    const double v = good * std::pow(bad / good, i / 4.0);
    const double y = top + 10 + i * 22;
    s << "<rect x=\"" << width - right + 20 << "\" y=\"" << y << "\" width=\"14\" height=\"14\" fill=\"" << colour(v, good, bad)
      << "\"/><text x=\"" << width - right + 40 << "\" y=\"" << y + 11 << "\">" << (i == 4 ? "&gt;= " : "") << fixed(v, 2)
      << "</text>\n";
  }
  s << "</svg>\n";
  return s.str();
}

}  // namespace kiln::tuner
