// PrefixHints: what the KV hints of a request do to the blocks of a prompt
// prefix, and the per-session quotas. It acts through the same parts as the
// rest of the cache (TierStore, and TierAllocator for slots and moves) and records holds
// in SessionRetention; EvictionPolicy honours them.
//
//   Hold      retain / pin: a deadline on each full block of the prefix that
//             is cached now (SessionRetention::HoldBlock), within the kind's
//             budget; past the budget the rest of the prefix is refused.
//   Demote    each device copy of the prefix that no sequence uses moves to
//             the host (or disk) tier now; one with no lower tier stays.
//   Prefetch  each host or disk block of the prefix gets a free device slot
//             and a load (no eviction is made for it); the next Match waits
//             for those loads, so it finds the prefix on the device.
//   Enforce   a session over its device / host quota gives up its own oldest
//             evictable blocks in that tier (demoted when a lower tier takes
//             them, else dropped) until it is within the quota.
//
// Blocks dropped from the cache entirely by a quota are remembered (a
// bounded set of hashes) so that a later miss on them can be counted as a
// policy miss (KvCacheManager::DroppedByPolicy).
//
// Thread-safety: none; the scheduler thread owns it.
#pragma once

#include <cstdint>
#include <deque>
#include <span>
#include <string>
#include <unordered_set>
#include <vector>

#include "kv/accounting/hint_counters.h"
#include "kv/media/tier_store.h"
#include "kv/movement/tier_allocator.h"
#include "kv/policy/session_retention.h"

namespace pg {

// Checks the hint and quota settings of cfg (the messages name the flags)
// and sets the hold budgets of `retention` from them (defaults in
// KvCacheConfig), for the tiers `store` opened.
Status InitHints(const KvCacheConfig& cfg, const TierStore& store, SessionRetention& retention);

class PrefixHints {
 public:
  // Most hashes remembered as dropped by policy.
  static constexpr size_t kMaxPolicyGhosts = 1 << 16;

  PrefixHints(TierStore& store, TierAllocator& alloc, SessionRetention& retention)
      : store_(store), alloc_(alloc), retention_(retention) {}

  // Blocks per session allowed in the device / host tier (0 = no quota).
  void SetQuotas(int64_t device_blocks, int64_t host_blocks) {
    quota_[kDeviceTier] = device_blocks;
    quota_[kHostTier] = host_blocks;
  }

  // Each returns how many blocks it acted on. Hold sets *refused (with a
  // reason) when the budget stopped it before the end of the prefix.
  int64_t Hold(std::span<const uint32_t> chain, BlockHold kind, double ttl_s, std::string* refused);
  int64_t Demote(std::span<const uint32_t> chain);
  int64_t Prefetch(std::span<const uint32_t> chain);
  // Waits for the loads Prefetch started (Match calls it, so that a prompt
  // whose prefix is being prefetched finds it on the device, not cut short
  // at the first block still loading). Cheap when none is in flight.
  void SettlePrefetches();
  // Brings `session` within its quotas (no-op without quotas or session).
  void Enforce(int32_t session);

  bool DroppedByPolicy(const BlockHash& h) const { return ghosts_.count(h) != 0; }
  HintCounters counters();

 private:
  // Moves entry id's copy out of `tier` (down a tier when one takes it).
  // keep: leave it when no lower copy could be made. False when it stayed.
  // *lost: no copy remains.
  bool EvictEntry(uint32_t id, int tier, bool keep, bool* lost);
  // The oldest evictable block of `session` in `tier` that its holds allow
  // to go, or PrefixIndex::kNone.
  uint32_t OldestOf(int32_t session, int tier) const;
  void RememberDropped(const BlockHash& h);

  TierStore& store_;
  TierAllocator& alloc_;
  SessionRetention& retention_;
  int64_t quota_[2] = {0, 0};
  HintCounters c_;
  std::unordered_set<BlockHash, BlockHashHasher> ghosts_;
  std::deque<BlockHash> ghost_order_;  // oldest first
  std::vector<uint64_t> prefetches_;   // tags of the prefetch loads not yet waited for
};

}  // namespace pg
