// The bench's three plots, as SVG documents (see svg_plot.h):
//   - throughput vs interactivity: one curve per configuration (its runs,
//     e.g. a concurrency sweep, ordered by interactivity) plus reference
//     points that give both figures;
//   - TTFT CDF: one step curve per run (baseline vs optimized);
//   - cache reuse over time: per time bin of send time, cached / prompt
//     tokens overall and per tier (when reported), beside the ideal reuse.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <vector>

#include "bench/reference_points.h"
#include "bench/run_report.h"

namespace pg::bench {

struct Curve {
  std::string label;
  std::vector<Summary> runs;
};

std::string ThroughputInteractivityPlot(const std::vector<Curve>& curves, const std::vector<ReferencePoint>& refs);
std::string TtftCdfPlot(const std::vector<RunReport>& runs);
// `bins` time bins over the run's measured requests.
std::string CacheReuseOverTimePlot(const RunReport& run, int bins = 12);

}  // namespace pg::bench
