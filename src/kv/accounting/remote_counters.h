// RemoteCounters: the remote KV tier's counters (kv/remote_tier.h), part of
// CacheCounters. Plain value type; cumulative since start except write_queue.
#pragma once

#include <cstdint>
#include <string>

namespace pg {

struct RemoteCounters {
  bool enabled = false;         // a remote tier is configured
  int64_t lookups = 0;          // lookups sent (one per admitted prompt with blocks past the local cache)
  int64_t lookup_blocks = 0;    // blocks asked for
  int64_t hit_blocks = 0;       // blocks found, verified and handed to the cache
  int64_t miss_blocks = 0;      // blocks asked for and not delivered (absent, past a miss, or an error)
  int64_t imported_blocks = 0;  // found blocks the cache took into the device tier
  int64_t errors = 0;           // commands that failed: unreachable, broken connection, deadline passed
  int64_t skipped = 0;          // lookups and writes skipped while backing off after an error
  int64_t corrupt = 0;          // values that failed verification (each a miss, then deleted)
  int64_t rejected_hmac = 0;    // values without the valid HMAC tag (each a miss, then deleted)
  int64_t abandoned = 0;        // lookups the scheduler stopped waiting for (deadline)
  int64_t writes = 0;           // blocks stored
  int64_t write_bytes = 0;      // bytes stored (values), the figure the size budget caps
  int64_t dropped_writes = 0;   // writes dropped: queue full, or Redis unavailable
  int64_t budget_refused = 0;   // writes refused by the size budget
  int64_t redirects = 0;        // Redis Cluster -MOVED / -ASK redirects followed
  int64_t write_queue = 0;      // writes queued now
};

class MetricSet;

// The prosgrow_kv_remote_* /metrics families; none when the tier is off.
void CollectRemoteMetrics(const RemoteCounters& c, MetricSet* out);

}  // namespace pg
