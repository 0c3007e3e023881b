#include "server/core/server_metrics.h"

#include "server/core/request_log.h"

namespace pg {

ServerMetrics::ServerMetrics(MetricsRegistry* r)
    : requests(r->AddCounter("prosgrow_http_requests_total", "HTTP requests by endpoint and status code.",
                             {"endpoint", "status"})),
      errors(r->AddCounter("prosgrow_http_errors_total", "HTTP error responses by kind.", {"kind"})),
      client_disconnects(r->AddCounter("prosgrow_http_client_disconnects_total",
                                       "Generations cancelled because the client went away.", {"endpoint"})),
      prompt_tokens(r->AddCounter("prosgrow_prompt_tokens_total", "Prompt tokens of finished requests.")),
      completion_tokens(r->AddCounter("prosgrow_completion_tokens_total", "Completion tokens of finished requests.")),
      cached_tokens(r->AddCounter("prosgrow_cached_prompt_tokens_total",
                                  "Prompt tokens served from cache, by the tier they came from.", {"tier"})),
      in_flight(r->AddGauge("prosgrow_http_generations_in_flight", "Generation requests being served.")),
      ttft_s(r->AddHistogram("prosgrow_time_to_first_token_seconds", "Arrival to first token, seconds.",
                             MetricsRegistry::LatencyBuckets())),
      itl_s(r->AddHistogram("prosgrow_inter_token_latency_seconds", "Time between consecutive tokens, seconds.",
                            MetricsRegistry::LatencyBuckets())),
      e2e_s(r->AddHistogram("prosgrow_request_latency_seconds", "Arrival to last token, seconds.",
                            MetricsRegistry::LatencyBuckets())),
      queue_s(r->AddHistogram("prosgrow_queue_time_seconds", "Arrival to first scheduled, seconds.",
                              MetricsRegistry::LatencyBuckets())) {
  missed_tokens =
      r->AddCounter("prosgrow_prompt_tokens_missed_total",
                    "Prompt tokens of finished requests not served from the KV cache, by reason.", {"reason"});
  evicted_tokens =
      r->AddCounter("prosgrow_prompt_tokens_evicted_total",
                    "Prompt tokens that missed because their KV was evicted, by the tier it left last.", {"tier"});
  evicted_age_s =
      r->AddHistogram("prosgrow_prompt_evicted_age_seconds",
                      "Per request that missed evicted KV: seconds since it was evicted.", EvictionAgeBuckets());
  skipped_tools = r->AddCounter("prosgrow_hosted_tools_skipped_total",
                                "Hosted tool declarations (web_search, image_generation, ...) accepted and not "
                                "offered to the model, by tool type.",
                                {"type"});
  for (const char* reason : {"never_seen", "evicted", "diverged", "loading", "policy"}) missed_tokens->Inc({reason}, 0);
  for (const char* tier : {"device", "host", "disk"}) evicted_tokens->Inc({tier}, 0);
  // Series that should exist from the start, so dashboards see zeros.
  prompt_tokens->Inc({}, 0);
  completion_tokens->Inc({}, 0);
  for (const char* tier : {"device", "host", "disk"}) cached_tokens->Inc({tier}, 0);
  cached_tokens->Inc({"remote"}, 0);
}

void ServerMetrics::CountTokens(const GenerationResult& result) {
  NoteRequestTokens(result);  // for this request's log line
  prompt_tokens->Inc({}, static_cast<double>(result.prompt_tokens));
  completion_tokens->Inc({}, static_cast<double>(result.completion_tokens));
  for (int t = 0; t < kNumTiers; ++t) cached_tokens->Inc({TierName(t)}, static_cast<double>(result.cache[t]));
  CountMisses(result.cache.miss);
}

void ServerMetrics::CountSkippedTools(const std::vector<std::string>& types) {
  NoteRequestSkippedTools(types);  // for this request's log line
  for (const std::string& t : types) skipped_tools->Inc({t});
}

std::vector<double> ServerMetrics::EvictionAgeBuckets() { return {1, 5, 15, 60, 300, 900, 3600, 14400, 86400}; }

void ServerMetrics::CountMisses(const MissReasons& m) {
  missed_tokens->Inc({"never_seen"}, static_cast<double>(m.never_seen));
  missed_tokens->Inc({"evicted"}, static_cast<double>(m.evicted));
  missed_tokens->Inc({"diverged"}, static_cast<double>(m.diverged));
  missed_tokens->Inc({"loading"}, static_cast<double>(m.loading));
  missed_tokens->Inc({"policy"}, static_cast<double>(m.policy));
  for (int t = 0; t < kLocalTiers; ++t) evicted_tokens->Inc({TierName(t)}, static_cast<double>(m.evicted_by_tier[t]));
  if (m.evicted > 0 && m.evicted_age_s >= 0) evicted_age_s->Observe(m.evicted_age_s);
}

}  // namespace pg
