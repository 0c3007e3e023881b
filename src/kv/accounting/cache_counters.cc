#include "kv/accounting/cache_counters.h"

#include <fmt/format.h>

#include "base/units.h"
#include "metrics/metric_set.h"

namespace pg {

std::string CacheCounters::Report() const {
  std::string out = fmt::format(
      "kv cache: {} lookups, {} prompt tokens, {} reused ({:.1f}%), {} index entries\n", lookups, lookup_tokens,
      reused_tokens, lookup_tokens ? 100.0 * double(reused_tokens) / double(lookup_tokens) : 0.0, index_entries);
  auto line = [&](const char* name, const TierCounters& t) {
    out += fmt::format(
        "  {:<6} hits {} blk ({} tok)  misses {} blk  in {}  out {}  evict {}  promote {}  demote {}  errors {}  "
        "used {}/{} blk ({} cached, {} pinned)\n",
        name, t.hit_blocks, t.hit_tokens, t.miss_blocks, FormatBytes(uint64_t(t.bytes_in)),
        FormatBytes(uint64_t(t.bytes_out)), t.evictions, t.promotions, t.demotions, t.errors, t.used_blocks,
        t.capacity_blocks, t.cached_blocks, t.pinned_blocks);
  };
  for (int t = 0; t < kLocalTiers; ++t) line(TierName(t), tiers[size_t(t)]);
  if (skipped_short_hits || failed_loads || disk_writes_disabled) {
    out += fmt::format("  short hits skipped {}  failed loads {}  disk writes {}\n", skipped_short_hits, failed_loads,
                       disk_writes_disabled ? "STOPPED" : "on");
  }
  if (miss.prompt_tokens > 0) {
    out += fmt::format(
        "  misses by reason (tokens): never_seen {}  evicted {} (device {}, host {}, disk {})  diverged {}  loading {} "
        " "
        "policy {}\n",
        miss.never_seen, miss.evicted[0] + miss.evicted[1] + miss.evicted[2], miss.evicted[0], miss.evicted[1],
        miss.evicted[2], miss.diverged, miss.loading, miss.policy);
    out += fmt::format("  hit ratio {:.3f}", hit_ratio());
    for (const WhatIfPoint& p : whatif)
      if (*p.tier) out += fmt::format("  +{}GiB {} {:.3f}", p.extra_gib, p.tier, whatif_ratio(p));
    out += "\n";
  }
  return out;
}

void CollectTierMetrics(const CacheCounters& kv, MetricSet* out) {
  struct Field {
    const char* name;
    const char* help;
    bool counter;
    int64_t TierCounters::*member;
  };
  static const Field kFields[] = {
      {"prosgrow_kv_hit_blocks_total", "KV blocks found in the tier by prefix lookups.", true,
       &TierCounters::hit_blocks},
      {"prosgrow_kv_hit_tokens_total", "Tokens found in the tier by prefix lookups.", true, &TierCounters::hit_tokens},
      {"prosgrow_kv_miss_blocks_total", "KV blocks looked up and not found in the tier.", true,
       &TierCounters::miss_blocks},
      {"prosgrow_kv_bytes_in_total", "Bytes written into the tier.", true, &TierCounters::bytes_in},
      {"prosgrow_kv_bytes_out_total", "Bytes read out of the tier.", true, &TierCounters::bytes_out},
      {"prosgrow_kv_evictions_total", "Blocks evicted from the tier.", true, &TierCounters::evictions},
      {"prosgrow_kv_promotions_total", "Blocks promoted from the tier to the device.", true, &TierCounters::promotions},
      {"prosgrow_kv_demotions_total", "Blocks demoted from the tier to the next.", true, &TierCounters::demotions},
      {"prosgrow_kv_errors_total", "Corrupt, truncated or missing blocks found.", true, &TierCounters::errors},
      {"prosgrow_kv_used_blocks", "Blocks holding data in the tier.", false, &TierCounters::used_blocks},
      {"prosgrow_kv_cached_blocks", "Blocks published in the prefix index in the tier.", false,
       &TierCounters::cached_blocks},
      {"prosgrow_kv_capacity_blocks", "Capacity of the tier in blocks.", false, &TierCounters::capacity_blocks},
      {"prosgrow_kv_pinned_blocks", "Blocks referenced by a live sequence (device; 0 elsewhere).", false,
       &TierCounters::pinned_blocks},
  };
  for (const Field& f : kFields) {
    MetricFamily& family = f.counter ? out->Counter(f.name, f.help) : out->Gauge(f.name, f.help);
    for (int t = 0; t < kLocalTiers; ++t) family.Add({{"tier", TierName(t)}}, kv.tiers[size_t(t)].*f.member);
  }
}

void CacheCounters::CollectWhatIfMetrics(MetricSet* out) const {
  MetricFamily& ratio =
      out->Gauge("prosgrow_kv_whatif_hit_ratio",
                 "Prompt tokens that would be served from the KV cache with extra_gib more of the tier, estimated from "
                 "evicted-block ghosts (extra_gib=\"0\": measured), over admitted requests.");
  for (const char* tier : {"host", "disk"}) ratio.Add({{"tier", tier}, {"extra_gib", "0"}}, hit_ratio());
  for (const WhatIfPoint& p : whatif)
    if (*p.tier) ratio.Add({{"tier", p.tier}, {"extra_gib", MetricValue(p.extra_gib).text()}}, whatif_ratio(p));
  MetricFamily& extra = out->Gauge("prosgrow_kv_whatif_extra_blocks", "Blocks of the tier that extra_gib stands for.");
  for (const WhatIfPoint& p : whatif)
    if (*p.tier) extra.Add({{"tier", p.tier}, {"extra_gib", MetricValue(p.extra_gib).text()}}, p.extra_blocks);
  MetricFamily& ghosts = out->Gauge("prosgrow_kv_ghost_blocks",
                                    "Evicted blocks remembered for the what-if estimate, by the tier they left.");
  for (int t = 0; t < kLocalTiers; ++t) ghosts.Add({{"tier", TierName(t)}}, ghost_blocks[t]);
}

}  // namespace pg
