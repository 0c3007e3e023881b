// RunReport: the saved form of one bench run (JSON file with the run's
// configuration, summary and every request record) and the Markdown table
// that puts one or more runs side by side, with ratios to the first.
// Thread-safety: pure functions and value types.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "base/status.h"
#include "bench/metrics.h"
#include "bench/request_record.h"

namespace pg::bench {

struct RunReport {
  nlohmann::json config;  // free-form: url, workload, flags, vocab...
  Summary summary;
  std::vector<RequestRecord> records;
};

// {"format": "prosgrow-bench-run/1", "config", "summary", "requests": [...]}
nlohmann::json RunReportToJson(const RunReport& r);
Result<RunReport> RunReportFromJson(const nlohmann::json& j, const std::string& name);
Result<RunReport> LoadRunReport(const std::string& path);
Status WriteTextFile(const std::string& path, const std::string& text);

// Markdown table, one column per summary; columns after the first also show
// the ratio to the first, "9.05 (2.99x)". Rows: the reference table's rows,
// then ideal reuse, reuse / ideal, P90 E2E-normalized interactivity, per-tier
// reuse and cost when present, the speculative acceptance rate and mean
// accepted length when a run reported them, completed / failed.
std::string SummaryTable(const std::vector<Summary>& runs);

// The server's KV accounting at the end of a run, read from its /metrics
// text: {"miss_reasons": {reason: tokens}, "whatif": [{"tier", "extra_gib",
// "hit_ratio"}]} (extra_gib 0 = measured). Empty object when the server
// exports neither prosgrow_prompt_tokens_missed_total nor
// prosgrow_kv_whatif_hit_ratio.
nlohmann::json KvAccountingFromMetrics(const std::string& metrics_text);
// Markdown: the miss reasons as shares of the missed tokens, and the
// what-if hit ratios per tier and extra GiB. "" for an empty object.
std::string KvAccountingTable(const nlohmann::json& accounting);

// "n/a" for nullopt, else the value with `digits` decimals.
std::string FormatOpt(const std::optional<double>& v, int digits);

}  // namespace pg::bench
