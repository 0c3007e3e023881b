// RemoteLookups: the cache's side of the remote tier (docs/kv-cache.md
// "Remote tier"): the lookups that waiting sequences ask for, and the import
// of the blocks found into the device tier, by the mover's (remote, device)
// road, the one loads from disk take. Thread-safety: scheduler thread only;
// the Redis traffic itself runs on RemoteTier's threads.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>

#include "kv/accounting/remote_counters.h"
#include "kv/kv_cache_config.h"
#include "kv/kv_cache_manager.h"
#include "kv/media/tier_store.h"
#include "kv/movement/tier_allocator.h"
#include "kv/movement/tier_mover.h"
#include "kv/use_clock.h"

namespace pg {

class RemoteLookups {
 public:
  RemoteLookups(const KvCacheConfig& cfg, TierStore& store, TierAllocator& alloc, TierMover& mover, UseClock& clock)
      : cfg_(cfg), page_(cfg.layout.page_tokens), store_(store), alloc_(alloc), mover_(mover), clock_(clock) {}

  // Asks Redis, in the background, for the full blocks of `tokens` past the
  // ones the local tiers hold (no-op without a remote tier, with nothing to
  // ask, or with a lookup of id already running).
  void Start(SeqId id, std::span<const int32_t> tokens, const CacheRequest& request);
  // True while id's lookup runs, at most until its deadline; then forgets it.
  bool Pending(SeqId id);
  int64_t pending() const { return int64_t(waits_.size()); }
  // Takes the blocks of finished lookups into the device tier.
  void Import();
  // The remote tier's counters with the imports and abandoned waits.
  RemoteCounters Snapshot() const;
  // Waits (at most timeout_s) until the remote tier's queued writes are
  // stored, after the write-behind copies on the mover threads.
  bool DrainWrites(double timeout_s);

 private:
  struct Wait {
    double deadline_s = 0;  // NowSeconds() after which the scheduler stops waiting
    bool done = false;      // the lookup's blocks were imported
  };

  const KvCacheConfig& cfg_;
  int page_;
  TierStore& store_;
  TierAllocator& alloc_;
  TierMover& mover_;
  UseClock& clock_;
  std::unordered_map<SeqId, Wait> waits_;
  int64_t imported_ = 0;
  int64_t abandoned_ = 0;
};

}  // namespace pg
