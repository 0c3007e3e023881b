// EngineSnapshot: the engine's counters and gauges as /metrics shows them,
// copied by the engine thread at the end of each step (and on every finish)
// and read under a mutex by MetricsText. Plain value type.
#pragma once

#include <cstdint>

#include "base/kv_layout.h"
#include "base/kv_tier.h"
#include "engine/speculative/speculative_decoder.h"
#include "engine/step_cost_model.h"
#include "kv/accounting/cache_counters.h"
#include "kv/accounting/hint_counters.h"
#include "metrics/metric_set.h"

namespace pg {

struct EngineSnapshot {
  int64_t waiting = 0, running = 0, loading = 0, batch_tokens = 0, steps = 0, preemptions = 0;
  int64_t prompt_tokens = 0, cached_tokens = 0;
  TierTokens cached_by_tier;  // cached_tokens by the tier they came from (remote: Redis)
  int64_t generated_tokens = 0, finished = 0;
  CacheCounters kv;
  HintCounters hints;       // KV hints and session quotas
  SpecCounters spec;        // speculative decoding (empty when off)
  StepCostModel step_cost;  // a copy of the engine's
};

// The engine's own families (queue, batch, token totals, the per-tier KV
// families, the Model Server Protocol's signals), in /metrics order.
void CollectEngineMetrics(const EngineSnapshot& s, MetricSet* out);

// What one token costs in a KV block, by part (kv: K and V rows; latent: MLA
// latent rows; indexer: DSA indexer keys), and one block's bytes: every tier
// stores blocks of this size, and the what-if estimates count in them.
void CollectKvLayoutMetrics(const KvLayout& layout, MetricSet* out);

}  // namespace pg
