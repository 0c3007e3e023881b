// Private to src/kv: the state behind KvCacheManager, in parts a reader can
// hold one at a time:
//   TierStore         index, the media (device/host SlotTiers, DiskTier,
//                     RemoteTier), the tier table, counters
//   SessionRetention  session deadlines (hints, tool-call parking)
//   EvictionPolicy    victim choice (LruEviction / CostAwareEviction)
//   TierMover         copies in flight, each a (from, to) pair of tiers
//   TierAllocator     slots and disk room, evicting down the tier table
//   PrefixHints       KV hints and session quotas
//   SequenceTable     the sequences and their block tables (sequence_table.h)
//   RemoteLookups     lookups in the remote tier and their imports (remote_lookups.h)
// Impl itself wires them (Init) and keeps the prefix lookups: Match, the
// release and trimming of a match, and the miss explanation. Scheduler
// thread only.
#pragma once

#include <memory>
#include <span>
#include <vector>

#include "kv/kv_cache_manager.h"
#include "kv/media/tier_store.h"
#include "kv/movement/tier_allocator.h"
#include "kv/movement/tier_mover.h"
#include "kv/policy/eviction_policy.h"
#include "kv/policy/session_retention.h"
#include "kv/prefix_hints.h"
#include "kv/remote_lookups.h"
#include "kv/sequence_table.h"
#include "kv/use_clock.h"

namespace pg {

class KvCacheManager::Impl {
 public:
  explicit Impl(KvCacheConfig config);
  Status Init();

  SequenceTable& seqs() { return *seqs_; }
  const SequenceTable& seqs() const { return *seqs_; }
  RemoteLookups& remote() { return *remote_; }
  const RemoteLookups& remote() const { return *remote_; }

  // Prefix lookups.
  PrefixMatch Match(std::span<const int32_t> tokens, const CacheRequest& request, KvCacheManager* owner);
  void ReleaseMatch(PrefixMatch* m);
  void ExplainMisses(PrefixMatch* m, std::span<const int32_t> tokens);
  // Keeps at most max_tokens of the match (whole blocks), unlocking the
  // rest; their tokens count as miss reason `policy` (a policy hook).
  void LimitMatch(PrefixMatch* m, int64_t max_tokens);

  // The facade's verbs that only combine parts.
  void Tick();
  Status Flush();
  void WaitAll() { alloc_->WaitAll(); }
  PrefixHintResult ApplyPrefixHint(std::span<const int32_t> prefix, const CacheRequest& request, PrefixAction action,
                                   double ttl_s);  // kv_cache_hints.cc
  CacheCounters Counters() const;
  Status CheckIntegrity() const { return seqs_->CheckIntegrity(match_locks_); }

  int64_t device_blocks() const { return store_.device().capacity(); }
  uint8_t* DeviceBlockPtr(BlockId id) { return store_.device().KernelPtr(id); }
  void SetBlockObserver(KvBlockObserver* observer) { store_.index().set_observer(observer); }
  SessionRetention& retention() { return retention_; }
  const KvCacheConfig& config() const { return cfg_; }
  PrefixHints& hints() { return *hints_; }

 private:
  std::vector<Tier> UsableTiers(std::span<const uint32_t> chain, MatchStop* stop);

  KvCacheConfig cfg_;
  int page_;
  TierStore store_;
  SessionRetention retention_;
  UseClock clock_;  // logical time of lookups, commits and imports
  std::unique_ptr<EvictionPolicy> policy_;
  std::unique_ptr<TierMover> mover_;
  std::unique_ptr<TierAllocator> alloc_;
  std::unique_ptr<PrefixHints> hints_;  // KV hints and session quotas
  std::unique_ptr<SequenceTable> seqs_;
  std::unique_ptr<RemoteLookups> remote_;
  int64_t match_locks_ = 0;  // entry locks held by live PrefixMatch handles
};

}  // namespace pg
