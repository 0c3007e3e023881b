// CacheCounters: a snapshot of the tiered KV cache's counters and occupancy,
// returned by KvCacheManager::counters(). Plain value type.
//
// Units: *_blocks in blocks, *_tokens in tokens, *_bytes in bytes. All counts
// are cumulative since the manager was created, except the occupancy fields.
#pragma once

#include <array>
#include <cstdint>
#include <string>

#include "base/kv_tier.h"
#include "kv/accounting/miss_counts.h"
#include "kv/accounting/remote_counters.h"

namespace pg {

class MetricSet;

struct TierCounters {
  // Lookups: a block looked up by Match() is a hit in the first tier that
  // holds it; it is a miss in every tier above that one (so device misses
  // include host and disk hits, and disk misses are the blocks found nowhere).
  int64_t hit_blocks = 0;
  int64_t hit_tokens = 0;
  int64_t miss_blocks = 0;
  int64_t bytes_in = 0;    // block bytes written into this tier (commits, demotions, promotions)
  int64_t bytes_out = 0;   // block bytes read out of this tier towards another tier
  int64_t evictions = 0;   // blocks dropped from this tier to make room
  int64_t promotions = 0;  // blocks copied from this tier up to the device tier
  int64_t demotions = 0;   // blocks copied from this tier down to the next one
  int64_t errors = 0;      // disk: corrupt / truncated / missing files found (each then deleted)
  // Occupancy now.
  int64_t capacity_blocks = 0;
  int64_t used_blocks = 0;    // slots holding data (in use by a sequence, cached, or in flight)
  int64_t cached_blocks = 0;  // blocks published in the prefix index in this tier
  int64_t pinned_blocks = 0;  // device: referenced by a live sequence
  int64_t used_bytes = 0;
  int64_t capacity_bytes = 0;
};

struct CacheCounters {
  std::array<TierCounters, kLocalTiers> tiers{};  // indexed by Tier (device, host, disk)
  int64_t lookups = 0;                            // Match() calls with the prefix cache in use
  int64_t lookup_tokens = 0;                      // prompt tokens offered to Match()
  int64_t reused_tokens = 0;                      // tokens finally not recomputed (after failed loads are dropped)
  int64_t skipped_short_hits = 0;                 // host/disk hits below min_promote_tokens, recomputed instead
  int64_t failed_loads = 0;                       // promotions that failed verification (counted as misses)
  int64_t index_entries = 0;                      // blocks in the prefix index (any tier)
  int64_t sessions = 0;                           // session names tracked now (SessionRetention, bounded)
  int64_t forgotten_sessions = 0;                 // names forgotten (LRU or idle) since start
  bool disk_writes_disabled = false;              // after a full disk / read-only dir
  RemoteCounters remote;                          // the remote tier (remote_counters.h); enabled = false without one

  // Uncached prompt tokens of admitted requests, by reason (miss_counts.h,
  // docs/kv-cache.md "Miss reasons"); explained_* are the prompts classified.
  struct MissTotals {
    int64_t never_seen = 0;
    int64_t evicted[kLocalTiers] = {};  // by the tier the block left last
    int64_t diverged = 0;
    int64_t loading = 0;
    int64_t policy = 0;
    int64_t prompt_tokens = 0;  // prompts classified
    int64_t cached_tokens = 0;  // of those, served from the cache (after failed loads)
  } miss;
  // "What if tier T had extra_gib more" (tier "" = not filled in yet): the tokens that would have been
  // served (cached now + would-be hits). Ratio = hit_tokens / miss.prompt_tokens.
  struct WhatIfPoint {
    const char* tier = "";  // "host" | "disk"
    double extra_gib = 0;
    int64_t extra_blocks = 0;  // extra_gib in blocks of that tier
    int64_t hit_tokens = 0;
  };
  std::array<WhatIfPoint, kWhatIfPoints> whatif{};  // fixed size: snapshots allocate nothing
  int64_t ghost_blocks[kLocalTiers] = {};           // evicted blocks remembered per tier

  double hit_ratio() const { return miss.prompt_tokens ? double(miss.cached_tokens) / double(miss.prompt_tokens) : 0; }
  double whatif_ratio(const WhatIfPoint& p) const {
    return miss.prompt_tokens ? double(p.hit_tokens) / double(miss.prompt_tokens) : 0;
  }

  // Multi-line human summary (for --cache-report).
  std::string Report() const;
  // The what-if estimate and the ghosts, as /metrics families:
  //   prosgrow_kv_whatif_hit_ratio{tier, extra_gib} (extra_gib="0": measured),
  //   prosgrow_kv_whatif_extra_blocks{tier, extra_gib}, prosgrow_kv_ghost_blocks{tier}.
  void CollectWhatIfMetrics(MetricSet* out) const;
};

// The per-tier /metrics families (prosgrow_kv_hit_blocks_total{tier} ... prosgrow_kv_pinned_blocks{tier}).
void CollectTierMetrics(const CacheCounters& kv, MetricSet* out);

}  // namespace pg
