#include "kv/accounting/hint_counters.h"

#include "metrics/metric_set.h"

namespace pg {

void CollectHintMetrics(const HintCounters& h, MetricSet* out) {
  out->Counter("prosgrow_kv_hint_blocks_total", "KV blocks acted on by kv_hints, by action.")
      .Add({{"action", "retain"}}, h.retained_blocks)
      .Add({{"action", "pin"}}, h.pinned_blocks)
      .Add({{"action", "demote"}}, h.demoted_blocks)
      .Add({{"action", "prefetch"}}, h.prefetched_blocks);
  out->Counter("prosgrow_kv_hints_refused_total", "Retain or pin hints refused (in part) for a full budget.",
               h.refused_hints);
  out->Gauge("prosgrow_kv_hint_held_blocks", "Blocks held by retain / pin hints now.")
      .Add({{"hold", "retain"}}, h.live_retained)
      .Add({{"hold", "pin"}}, h.live_pinned);
  out->Counter("prosgrow_kv_quota_evictions_total", "Block copies sessions gave up for their KV quota.",
               h.quota_evictions);
  out->Counter("prosgrow_kv_policy_dropped_blocks_total", "Blocks a quota dropped from the cache entirely.",
               h.policy_dropped);
}

}  // namespace pg
