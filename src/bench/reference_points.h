// ReferencePoint: a published benchmark figure read from a CSV in the layout
// of ../shared/data/reference/published.csv:
//   label,hardware,model,concurrency,output_tok_s_gpu,interactivity,
//   ttft_p50,ttft_p90,e2e_p50,cost_per_mtok,source
// Columns are found by header name (order free, unknown columns ignored);
// empty cells are "not given". Fields may be double-quoted ("a, b").
// Thread-safety: pure functions and value types.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "bench/metrics.h"

namespace pg::bench {

struct ReferencePoint {
  std::string label, hardware, model, source;
  std::optional<double> concurrency, output_tok_s_gpu, interactivity, ttft_p50, ttft_p90, e2e_p50, cost_per_mtok;
};

Result<std::vector<ReferencePoint>> ParseReferenceCsv(const std::string& text, const std::string& name);
Result<std::vector<ReferencePoint>> LoadReferenceCsv(const std::string& path);

// Markdown table: each reference point beside the measured run with the same
// concurrency (else the last run), with measured / reference ratios.
std::string ReferenceTable(const std::vector<Summary>& measured, const std::vector<ReferencePoint>& refs);

}  // namespace pg::bench
