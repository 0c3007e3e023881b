#include "bench/svg_plot.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>

namespace pg::bench {
namespace {

const char* const kColors[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                               "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

std::string Escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o.push_back(c);
    }
  }
  return o;
}

std::string TickLabel(double v) {
  double a = std::fabs(v);
  if (a == 0) return "0";
  if (a >= 1e5 || a < 1e-3) return fmt::format("{:.0e}", v);
  if (a >= 100 || std::fabs(v - std::round(v)) < 1e-9) return fmt::format("{:.0f}", v);
  if (a >= 1) return fmt::format("{:.1f}", v);
  return fmt::format("{:.3g}", v);
}

struct Axis {
  double lo, hi;
  bool log;
  double px0, px1;  // pixel positions of lo and hi
  double Map(double v) const {
    double a = log ? std::log10(v) : v;
    double l = log ? std::log10(lo) : lo;
    double h = log ? std::log10(hi) : hi;
    return px0 + (a - l) / (h - l) * (px1 - px0);
  }
};

bool Drawable(double v, bool log) { return std::isfinite(v) && (!log || v > 0); }

void Range(const std::vector<PlotSeries>& series, bool x, bool log, double* lo, double* hi) {
  *lo = std::numeric_limits<double>::infinity();
  *hi = -std::numeric_limits<double>::infinity();
  for (const auto& s : series) {
    for (const auto& p : s.points) {
      double v = x ? p.first : p.second;
      double other = x ? p.second : p.first;
      if (!Drawable(v, log) || !std::isfinite(other)) continue;
      *lo = std::min(*lo, v);
      *hi = std::max(*hi, v);
    }
  }
}

void Pad(double* lo, double* hi, bool log) {
  if (log) {
    *lo = std::pow(10.0, std::floor(std::log10(*lo)));
    *hi = std::pow(10.0, std::ceil(std::log10(*hi)));
    if (*hi <= *lo) *hi = *lo * 10;
    return;
  }
  if (*hi <= *lo) {
    double d = std::fabs(*lo) > 0 ? std::fabs(*lo) * 0.5 : 1.0;
    *lo -= d;
    *hi += d;
  }
  auto ticks = NiceTicks(*lo, *hi, false);
  double step = ticks.size() >= 2 ? ticks[1] - ticks[0] : (*hi - *lo);
  *lo = std::floor(*lo / step) * step;
  *hi = std::ceil(*hi / step) * step;
}

}  // namespace

std::vector<double> NiceTicks(double lo, double hi, bool log_scale) {
  std::vector<double> t;
  if (!(hi > lo) || !std::isfinite(lo) || !std::isfinite(hi)) return t;
  if (log_scale) {
    if (lo <= 0) return t;
    int e0 = static_cast<int>(std::floor(std::log10(lo)));
    int e1 = static_cast<int>(std::ceil(std::log10(hi)));
    bool sub = e1 - e0 <= 3;  // few decades: add 2x and 5x ticks
    for (int e = e0; e <= e1; ++e) {
      for (double m : {1.0, 2.0, 5.0}) {
        if (m != 1.0 && !sub) continue;
        double v = m * std::pow(10.0, e);
        if (v >= lo * (1 - 1e-9) && v <= hi * (1 + 1e-9)) t.push_back(v);
      }
    }
    return t;
  }
  double raw = (hi - lo) / 6.0;
  double mag = std::pow(10.0, std::floor(std::log10(raw)));
  double step = mag;
  for (double m : {1.0, 2.0, 5.0, 10.0}) {
    if (m * mag >= raw) {
      step = m * mag;
      break;
    }
  }
  for (double v = std::ceil(lo / step - 1e-9) * step; v <= hi + step * 1e-9; v += step) {
    t.push_back(std::fabs(v) < step * 1e-9 ? 0.0 : v);
  }
  return t;
}

namespace {

// The picture's size and the margins around the plot area, in pixels.
struct Frame {
  double W, H;
  double left = 80, right = 230, top = 50, bottom = 60;
  double plot_w() const { return W - left - right; }
  double plot_h() const { return H - top - bottom; }
};

// The axes' ranges: the data's, padded, then the layout's overrides. False
// when no point is drawable.
bool FitAxes(const PlotLayout& spec, const std::vector<PlotSeries>& series, const Frame& f, Axis* ax, Axis* ay) {
  double xlo, xhi, ylo, yhi;
  Range(series, true, spec.log_x, &xlo, &xhi);
  Range(series, false, spec.log_y, &ylo, &yhi);
  if (!std::isfinite(xlo) || !std::isfinite(ylo)) return false;
  Pad(&xlo, &xhi, spec.log_x);
  Pad(&ylo, &yhi, spec.log_y);
  if (spec.x_min && (!spec.log_x || *spec.x_min > 0)) xlo = *spec.x_min;
  if (spec.x_max) xhi = *spec.x_max;
  if (spec.y_min && (!spec.log_y || *spec.y_min > 0)) ylo = *spec.y_min;
  if (spec.y_max) yhi = *spec.y_max;
  if (!(xhi > xlo)) xhi = xlo + 1;
  if (!(yhi > ylo)) yhi = ylo + 1;
  *ax = Axis{xlo, xhi, spec.log_x, f.left, f.W - f.right};
  *ay = Axis{ylo, yhi, spec.log_y, f.H - f.bottom, f.top};
  return true;
}

// Frame, grid, ticks and axis labels.
void DrawAxes(const PlotLayout& spec, const Frame& f, const Axis& ax, const Axis& ay, std::string& o) {
  const double W = f.W, H = f.H, left = f.left, right = f.right, top = f.top, bottom = f.bottom;
  o += fmt::format("<rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"black\"/>\n", left, top,
                   f.plot_w(), f.plot_h());
  for (double v : NiceTicks(ax.lo, ax.hi, spec.log_x)) {
    double x = ax.Map(v);
    o += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/>\n", x, top,
                     H - bottom);
    o += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"black\"/>\n", x, H - bottom,
                     H - bottom + 5);
    o +=
        fmt::format("<text x=\"{:.1f}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", x, H - bottom + 18, TickLabel(v));
  }
  for (double v : NiceTicks(ay.lo, ay.hi, spec.log_y)) {
    double y = ay.Map(v);
    o += fmt::format("<line x1=\"{1}\" y1=\"{0:.1f}\" x2=\"{2}\" y2=\"{0:.1f}\" stroke=\"#ddd\"/>\n", y, left,
                     W - right);
    o += fmt::format("<line x1=\"{1}\" y1=\"{0:.1f}\" x2=\"{2}\" y2=\"{0:.1f}\" stroke=\"black\"/>\n", y, left - 5,
                     left);
    o += fmt::format("<text x=\"{}\" y=\"{:.1f}\" text-anchor=\"end\">{}</text>\n", left - 8, y + 4, TickLabel(v));
  }
  o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}</text>\n", left + f.plot_w() / 2, H - 18,
                   Escape(spec.x_label + (spec.log_x ? " (log)" : "")));
  o += fmt::format("<text x=\"18\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 18 {0})\">{1}</text>\n",
                   top + f.plot_h() / 2, Escape(spec.y_label + (spec.log_y ? " (log)" : "")));
}

// Series s's line and markers, clipped to the plot area (#area).
void DrawSeries(const PlotLayout& spec, const Axis& ax, const Axis& ay, const PlotSeries& s, const char* color,
                std::string& o) {
  std::vector<std::pair<double, double>> px;
  for (const auto& p : s.points) {
    if (Drawable(p.first, spec.log_x) && Drawable(p.second, spec.log_y))
      px.push_back({ax.Map(p.first), ay.Map(p.second)});
  }
  o += "<g clip-path=\"url(#area)\">\n";
  if (s.lines && px.size() >= 2) {
    std::string d = fmt::format("M{:.1f},{:.1f}", px[0].first, px[0].second);
    for (size_t k = 1; k < px.size(); ++k) {
      if (s.step) d += fmt::format(" H{:.1f}", px[k].first);
      d += fmt::format(" L{:.1f},{:.1f}", px[k].first, px[k].second);
    }
    o += fmt::format("<path d=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"2\"{}/>\n", d, color,
                     s.dashed ? " stroke-dasharray=\"6 4\"" : "");
  }
  if (s.markers) {
    for (const auto& p : px) {
      o += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"/>\n", p.first, p.second, color);
    }
  }
  o += "</g>\n";
}

// Row i of the legend, right of the plot area.
void DrawLegendEntry(const Frame& f, const PlotSeries& s, size_t i, const char* color, std::string& o) {
  double ly = f.top + 10 + 20 * static_cast<double>(i);
  double lx = f.W - f.right + 15;
  o += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"{}\" stroke-width=\"{}\"{}/>\n", lx, ly,
                   lx + 24, ly, color, s.lines ? 2 : 0, s.dashed ? " stroke-dasharray=\"6 4\"" : "");
  if (s.markers) o += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"4\" fill=\"{}\"/>\n", lx + 12, ly, color);
  std::string name = s.name.size() > 28 ? s.name.substr(0, 27) + "..." : s.name;
  o += fmt::format("<text x=\"{}\" y=\"{}\"><title>{}</title>{}</text>\n", lx + 30, ly + 4, Escape(s.name),
                   Escape(name));
}

}  // namespace

std::string RenderSvg(const PlotLayout& spec, const std::vector<PlotSeries>& series) {
  const Frame f{static_cast<double>(spec.width), static_cast<double>(spec.height)};
  const double W = f.W, H = f.H;
  std::string o = fmt::format(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n",
      W, H);
  o += fmt::format("<text x=\"{}\" y=\"24\" text-anchor=\"middle\" font-size=\"16\">{}</text>\n",
                   f.left + f.plot_w() / 2, Escape(spec.title));
  Axis ax{}, ay{};
  if (!FitAxes(spec, series, f, &ax, &ay)) {
    o += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">no data</text>\n</svg>\n", W / 2, H / 2);
    return o;
  }
  DrawAxes(spec, f, ax, ay, o);

  // Series, clipped to the plot area, each with its legend entry.
  o += fmt::format("<clipPath id=\"area\"><rect x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\"/></clipPath>\n", f.left,
                   f.top, f.plot_w(), f.plot_h());
  for (size_t i = 0; i < series.size(); ++i) {
    const char* color = kColors[i % (sizeof(kColors) / sizeof(kColors[0]))];
    DrawSeries(spec, ax, ay, series[i], color, o);
    DrawLegendEntry(f, series[i], i, color, o);
  }
  o += "</svg>\n";
  return o;
}

}  // namespace pg::bench
