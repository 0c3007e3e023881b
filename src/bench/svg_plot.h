// SvgPlot: a small self-contained SVG line/scatter chart writer (axes with
// ticks and labels, optional log scales, a legend), enough for the bench's
// throughput-vs-interactivity, TTFT CDF and cache-reuse-over-time plots.
// Thread-safety: value type; Render is const.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace pg::bench {

struct PlotSeries {
  std::string name;
  std::vector<std::pair<double, double>> points;  // (x, y), drawn in order
  bool lines = true;
  bool markers = true;
  bool step = false;    // draw as a staircase (for CDFs)
  bool dashed = false;  // dashed line (reference / ideal curves)
};

struct PlotLayout {
  std::string title;
  std::string x_label;
  std::string y_label;
  bool log_x = false;
  bool log_y = false;
  std::optional<double> x_min, x_max, y_min, y_max;  // default: data range
  int width = 800;
  int height = 520;
};

// Returns a complete SVG document. Non-finite points, and points <= 0 on a
// log axis, are skipped; with no drawable point the plot says "no data".
std::string RenderSvg(const PlotLayout& spec, const std::vector<PlotSeries>& series);

// Tick positions for [lo, hi]: "nice" steps of 1, 2 or 5 x 10^k (linear) or
// 1, 2, 5 x 10^k / powers of ten (log). Exposed for tests.
std::vector<double> NiceTicks(double lo, double hi, bool log_scale);

}  // namespace pg::bench
