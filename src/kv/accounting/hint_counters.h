// HintCounters: what the KV hints and the session quotas did (PrefixHints).
// Value type.
#pragma once

#include <cstdint>

namespace pg {

// Counters of the hints and quotas (cumulative unless noted).
struct HintCounters {
  int64_t retained_blocks = 0;    // block holds granted by retain hints
  int64_t pinned_blocks = 0;      // block holds granted by pin hints
  int64_t refused_hints = 0;      // hints refused (in part) for a full budget
  int64_t demoted_blocks = 0;     // device copies moved down by demote hints
  int64_t prefetched_blocks = 0;  // loads started by prefetch hints
  int64_t quota_evictions = 0;    // copies a session gave up for its quota
  int64_t policy_dropped = 0;     // ... of which the block left the cache entirely
  int64_t live_retained = 0;      // gauge: retain holds now
  int64_t live_pinned = 0;        // gauge: pin holds now
};

class MetricSet;
// The /metrics families of the hints and quotas (prosgrow_kv_hint_*, prosgrow_kv_quota_*, ...).
void CollectHintMetrics(const HintCounters& h, MetricSet* out);

}  // namespace pg
