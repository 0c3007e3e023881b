// ServerMetrics: the HTTP layer's metric families, registered once in a
// MetricsRegistry. All members are thread-safe (see metrics_registry.h).
#pragma once

#include "metrics/metrics_registry.h"
#include "server/core/generation_runner.h"

namespace pg {

struct ServerMetrics {
  explicit ServerMetrics(MetricsRegistry* registry);

  CounterFamily* requests;            // {endpoint, status}
  CounterFamily* errors;              // {kind}
  CounterFamily* client_disconnects;  // {endpoint}: requests cancelled because the client left
  CounterFamily* prompt_tokens;       // {}
  CounterFamily* completion_tokens;   // {}
  CounterFamily* cached_tokens;       // {tier}
  CounterFamily* missed_tokens;       // {reason}: never_seen, evicted, diverged, loading, policy
  CounterFamily* evicted_tokens;      // {tier}: the evicted reason by the tier the blocks left last
  Histogram* evicted_age_s;           // per request with evicted tokens: seconds since the eviction
  CounterFamily* skipped_tools;       // {type}: hosted tool declarations not offered (hosted_tools.h)
  Gauge* in_flight;                   // generation requests being served
  Histogram* ttft_s;
  Histogram* itl_s;
  Histogram* e2e_s;
  Histogram* queue_s;
  // Buckets of evicted_age_s: 1 s to 1 day.
  static std::vector<double> EvictionAgeBuckets();

  GenerationMetrics generation() const { return {ttft_s, itl_s, e2e_s, queue_s}; }
  // Adds one finished request's token counts.
  void CountTokens(const GenerationResult& result);
  // Adds one finished request's miss reasons.
  void CountMisses(const MissReasons& miss);
  // Counts a request's skipped hosted tool declarations (ApiRequest::
  // skipped_tools) by type, and names them in its log line.
  void CountSkippedTools(const std::vector<std::string>& types);
};

}  // namespace pg
