// Summary statistics of a bench run: the reference table's rows and the
// extra figures, computed from the per-request records.
//
// Definitions (measured = completed, non-warmup requests):
//   window_s             from the first measured request's send to the last
//                        measured request's end
//   output_tok_s         sum output_tokens / window_s (whole server)
//   output_tok_s_gpu     output_tok_s / gpus
//   ttft_p50, ttft_p90   percentiles of ttft_s
//   e2e_p50              median of e2e_s
//   interactivity_p50    median over requests with >= 2 output chunks of
//                        1 / mean inter-chunk gap (tok/s per user)
//   p90_e2e_norm_interactivity  InferenceX: 1 / p90(e2e_s / output_tokens)
//   cache_reuse          sum cached / sum prompt tokens over measured requests,
//                        only when every one reported cached tokens (else
//                        from the /metrics delta when given, else n/a)
//   ideal_reuse          sum ideal_cached / sum sent_prompt tokens
//   reuse_of_ideal       cache_reuse / ideal_reuse
//   cost_per_mtok        $/GPU-hr / (output_tok_s_gpu * 3600 / 1e6)
//   spec                 speculative decoding counts (spec_report.h): totals
//                        over measured requests, per drafter from /metrics
//   output_tok_s_all     as output_tok_s over every non-warmup request, the
//                        failed ones' streamed tokens included (a server that
//                        decodes a reply and then fails it, e.g. llama-server's
//                        output parser on a random model's text, did the work;
//                        the report shows both when any run has failures)
//   ttft_p90_all         p90 of ttft_s over every non-warmup request that got
//                        a first token, failed or not
// Percentiles interpolate linearly between order statistics (numpy default).
// Thread-safety: pure functions and value types.
#pragma once

#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "bench/request_record.h"
#include "bench/spec_report.h"

namespace pg::bench {

// q in [0, 1]; values need not be sorted; nullopt when empty.
std::optional<double> Percentile(std::vector<double> values, double q);

struct SummaryInputs {
  double gpus = 1;
  double gpu_hour_cost = 0;                    // 0: no cost row
  std::optional<double> metrics_cached_delta;  // from /metrics, when scraped
  int32_t concurrency = 0;
  std::string workload;
  std::string label;
  std::map<std::string, SpecCounts> spec_by_drafter;  // /metrics delta, when scraped
};

struct Summary {
  std::string label;
  std::string workload;
  int32_t concurrency = 0;
  double gpus = 1;
  int64_t completed = 0;
  int64_t failed = 0;
  int64_t warmup = 0;
  double window_s = 0;
  int64_t prompt_tokens = 0;  // server-reported where available, else sent
  int64_t output_tokens = 0;
  std::optional<double> output_tok_s;
  std::optional<double> output_tok_s_gpu;
  std::optional<double> ttft_p50, ttft_p90, ttft_p99;
  std::optional<double> e2e_p50, e2e_p90;
  std::optional<double> interactivity_p50;
  std::optional<double> p90_e2e_norm_interactivity;
  std::optional<double> cache_reuse;
  std::string cache_reuse_source;  // "usage", "timings", "metrics", "mixed" or "" (n/a)
  std::optional<double> ideal_reuse;
  std::optional<double> reuse_of_ideal;
  std::optional<double> tier_device, tier_host, tier_disk;  // fraction of prompt tokens
  std::optional<double> cost_per_mtok;
  double gpu_hour_cost = 0;
  std::optional<SpecSummary> spec;         // nullopt: the server reported no speculation
  std::optional<double> output_tok_s_all;  // failed requests' streamed tokens included
  std::optional<double> ttft_p90_all;      // failed requests' first tokens included
};

Summary Summarize(const std::vector<RequestRecord>& records, const SummaryInputs& in);
// Sets s.output_tok_s_all and s.ttft_p90_all from the records (Summarize
// does; `bench compare` too for runs saved before those fields existed).
void SummarizeWithFailed(const std::vector<RequestRecord>& records, Summary& s);

nlohmann::json SummaryToJson(const Summary& s);
Summary SummaryFromJson(const nlohmann::json& j);

// Per-request interactivity (1 / mean gap), nullopt with < 2 output chunks.
std::optional<double> RequestInteractivity(const RequestRecord& r);

}  // namespace pg::bench
