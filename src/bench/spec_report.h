// Speculative decoding as the bench sees it (issue 15): the per-request
// counts a server reports, their totals over a run, and the per-drafter
// counters of prosgrow's /metrics.
//
// Sources, per request (RequestRecord::spec_*):
//   prosgrow   usage.speculative = {steps, drafted_tokens, accepted_tokens,
//              acceptance_rate, mean_accepted_length, synthetic_acceptance}
//              (streamed in the usage chunk, or in a non-streaming body's
//              usage; absent when no draft was verified)
//   llama.cpp  timings.draft_n, timings.draft_n_accepted (no step count, so
//              no mean accepted length)
// Per drafter (prosgrow only): the delta over the run of
//   prosgrow_spec_steps_total{drafter=...}, prosgrow_spec_draft_tokens_total,
//   prosgrow_spec_accepted_tokens_total; it also counts warmup requests.
// Definitions (prosgrow's and vLLM's):
//   acceptance rate       accepted / drafted
//   mean accepted length  1 + accepted / steps: tokens per verification step,
//                         the target's own token included
// Thread-safety: pure functions and value types.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>

#include "bench/request_record.h"

namespace pg::bench {

struct SpecCounts {
  int64_t steps = -1;  // -1: not reported (llama.cpp reports no steps)
  int64_t drafted = 0;
  int64_t accepted = 0;

  std::optional<double> AcceptanceRate() const;      // nullopt when nothing was drafted
  std::optional<double> MeanAcceptedLength() const;  // nullopt without steps
};

// Reads usage.speculative (prosgrow) into rec->spec_* and sets
// rec->spec_source = "usage". A missing, null or malformed object leaves
// *rec as it is.
void ReadSpecUsage(const nlohmann::json& usage, RequestRecord* rec);
// Reads timings.draft_n / draft_n_accepted (llama.cpp) into rec->spec_*
// (steps stay -1) unless usage already supplied them.
void ReadSpecTimings(const nlohmann::json& timings, RequestRecord* rec);

// Per-drafter counters of a /metrics text, keyed by the drafter label; empty
// when the server exports none.
std::map<std::string, SpecCounts> SpecCountersFromMetrics(const std::string& metrics_text);
// after - before, per drafter (a drafter missing from `before` counts from 0).
std::map<std::string, SpecCounts> SpecCountersDelta(const std::map<std::string, SpecCounts>& before,
                                                    const std::map<std::string, SpecCounts>& after);

// The speculative part of a run's summary.
struct SpecSummary {
  int64_t requests = 0;                          // measured requests that reported counts
  SpecCounts total;                              // summed over them (steps -1 if any lacked steps)
  bool synthetic = false;                        // any request said synthetic_acceptance: true
  std::string source;                            // "usage", "timings" or "mixed"
  std::map<std::string, SpecCounts> by_drafter;  // /metrics delta (warmup included)
};

// nullopt when no measured (completed, non-warmup) request reported counts
// and `by_drafter` is empty.
std::optional<SpecSummary> SummarizeSpec(const std::vector<RequestRecord>& records,
                                         const std::map<std::string, SpecCounts>& by_drafter);

nlohmann::json SpecSummaryToJson(const SpecSummary& s);
std::optional<SpecSummary> SpecSummaryFromJson(const nlohmann::json& j);  // nullopt for null / not an object

// Markdown: one row per drafter and one for all requests: steps, drafted,
// accepted, acceptance rate, mean accepted length; a warning line under
// synthetic acceptance. "" for nullopt.
std::string SpecTable(const std::optional<SpecSummary>& s);

}  // namespace pg::bench
