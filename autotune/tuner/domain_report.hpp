// What a record says about its problem domain (README, "Problem domains"): the regret of the
// dispatch and actual/floor over the held-out points, their worst points, and SVG heat maps of
// both over two int dims (log2 axes).
#pragma once
#include <cstddef>
#include <string>

#include "record.hpp"

namespace kiln::tuner {

struct DomainFigures {
  std::size_t points = 0;        // held-out points counted
  double median_regret = 0;
  double worst_regret = 0;
  std::size_t with_floor = 0;    // of them, points with a floor
  double median_ratio = 0;       // actual/floor of the dispatched variant
  double worst_ratio = 0;
};

// Over the held-out points whose floor is at least `min_floor_s` (0: all of them).
DomainFigures domain_figures(const RecordedDomain& d, double min_floor_s = 0);

// A few lines for `kiln tune`'s summary.
std::string domain_summary(const RecordedDomain& d);

// Markdown: the figures over all held-out points and over those with a floor of at least 10 us,
// the five worst points by regret and by actual/floor, and links to the heat maps when
// `svg_dir` is not empty (files <kernel>_floor.svg and <kernel>_regret.svg there).
std::string domain_markdown(const Record& r, const std::string& svg_dir);

// The heat map of actual/floor (regret = false) or of regret over the first two int dims of the
// held-out points; empty when they have no int dim.
std::string heat_map_svg(const Record& r, bool regret);

}  // namespace kiln::tuner
