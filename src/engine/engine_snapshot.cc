#include "engine/engine_snapshot.h"

namespace pg {

void CollectEngineMetrics(const EngineSnapshot& s, MetricSet* out) {
  out->Gauge("prosgrow_queue_depth", "Requests waiting to be admitted.", s.waiting);
  out->Gauge("prosgrow_running_sequences", "Sequences in the running batch.", s.running);
  out->Gauge("prosgrow_loading_sequences", "Sequences waiting for KV promotion from host or disk.", s.loading);
  out->Gauge("prosgrow_batch_tokens", "Tokens in the last forward step.", s.batch_tokens);
  out->Counter("prosgrow_engine_steps_total", "Engine steps run.", s.steps);
  out->Counter("prosgrow_preemptions_total", "Sequences preempted for lack of device KV blocks.", s.preemptions);
  out->Counter("prosgrow_requests_finished_total", "Requests finished by the engine.", s.finished);
  // The HTTP layer exports prosgrow_prompt_tokens_total and
  // prosgrow_cached_prompt_tokens_total (requests answered); the engine's own
  // totals (every finished sequence, cancelled ones too) carry an engine_
  // prefix so /metrics never has a family twice.
  out->Counter("prosgrow_engine_prompt_tokens_total", "Prompt tokens of sequences the engine finished.",
               s.prompt_tokens);
  out->Counter("prosgrow_prompt_tokens_cached_total", "Prompt tokens of finished requests served from the KV cache.",
               s.cached_tokens);
  out->Counter("prosgrow_generation_tokens_total", "Tokens generated.", s.generated_tokens);
  MetricFamily& cached =
      out->Counter("prosgrow_engine_cached_prompt_tokens_total", "Prompt tokens served from the KV cache, by tier.");
  for (int t = 0; t < kNumTiers; ++t) cached.Add({{"tier", TierName(t)}}, s.cached_by_tier[t]);
  out->Gauge("prosgrow_cache_reuse_ratio", "Cached / prompt tokens over finished requests.",
             s.prompt_tokens ? static_cast<double>(s.cached_tokens) / static_cast<double>(s.prompt_tokens) : 0.0);
  CollectTierMetrics(s.kv, out);
  // The Model Server Protocol's three signals for an inference gateway (llm-d's
  // endpoint picker): queued requests, running requests, KV-cache utilisation
  // in [0, 1] (device blocks holding data / device capacity). docs/server.md.
  out->Gauge("prosgrow_num_requests_waiting",
             "Requests not yet generating: queued or waiting for KV promotion (Model Server Protocol queue size).",
             s.waiting + s.loading);
  out->Gauge("prosgrow_num_requests_running", "Requests running (Model Server Protocol running requests).", s.running);
  out->Gauge("prosgrow_kv_sessions", "Session names the KV cache tracks now (at most --kv-max-sessions).",
             s.kv.sessions);
  out->Counter("prosgrow_kv_sessions_forgotten_total", "Session names forgotten (least recently used or idle).",
               s.kv.forgotten_sessions);
  const double usage = s.kv.tiers[kDeviceTier].capacity_blocks > 0 ? double(s.kv.tiers[kDeviceTier].used_blocks) /
                                                                         double(s.kv.tiers[kDeviceTier].capacity_blocks)
                                                                   : 0.0;
  out->Gauge("prosgrow_kv_cache_usage_perc",
             "Device-tier KV blocks in use, as a fraction of its capacity (Model Server Protocol KV utilisation).",
             MetricValue::Fixed(usage, 6));
}

void CollectKvLayoutMetrics(const KvLayout& l, MetricSet* out) {
  const uint64_t rows = uint64_t(l.n_layers) * l.rows_per_layer() * l.row_bytes();
  MetricFamily& token = out->Gauge("prosgrow_kv_token_bytes",
                                   "Bytes one token occupies in a KV block, by part: kv (K and V rows), latent (MLA "
                                   "latent rows), indexer (DSA indexer keys).");
  token.Add({{"part", l.kind == AttentionKind::kMla ? "latent" : "kv"}}, rows);
  if (l.n_index_layers > 0) token.Add({{"part", "indexer"}}, uint64_t(l.n_index_layers) * l.index_row_bytes());
  out->Gauge("prosgrow_kv_block_bytes",
             "Bytes of one KV block (page_tokens tokens, all layers), as every tier stores it.",
             uint64_t(l.block_bytes()));
}

}  // namespace pg
