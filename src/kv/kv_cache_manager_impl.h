// Private to src/kv: the state behind KvCacheManager. It keeps the sequence
// table and the verbs that build it (Match, AllocateSequence, Settle,
// CommitFullBlock, Append, FreeSequence); the tiers are its parts:
//   TierStore         index, the media (device/host SlotTiers, DiskTier,
//                     RemoteTier), counters
//   SessionRetention  session deadlines (hints, tool-call parking)
//   EvictionPolicy    victim choice (LruEviction / CostAwareEviction)
//   TierMover         copies in flight, each a (from, to) pair of tiers
//   TierAllocator     slots and disk room, evicting down the tiers
// Scheduler thread only.
//
// Device slot references (SlotTier refcount = holders): each sequence whose
// block table lists the slot holds one; each in-flight move that reads or
// writes it holds one. The slot's owner names the index entry whose cached
// copy it is (none for a sequence's private block). The slots of a settled
// sequence's table are open for kernels (BlockArena::OpenForKernels) until
// they leave it.
#pragma once

#include <memory>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kv/kv_cache_manager.h"
#include "kv/media/remote_tier.h"
#include "kv/media/tier_store.h"
#include "kv/movement/tier_allocator.h"
#include "kv/movement/tier_mover.h"
#include "kv/policy/eviction_policy.h"
#include "kv/policy/session_retention.h"
#include "kv/prefix_hints.h"

namespace pg {

class KvCacheManager::Impl {
 public:
  explicit Impl(KvCacheConfig config);
  Status Init();

  struct Seq {
    std::vector<BlockId> table;  // ceil(n_tokens / page) device slots
    int64_t n_tokens = 0;
    BlockHash root;
    bool eligible = false;
    int32_t session = -1;
    std::vector<BlockHash> hashes;   // hashes of blocks [0, hashes.size()) (matched or committed)
    std::vector<uint32_t> matched;   // matched entries, chain order
    std::vector<Tier> matched_tier;  // tier each matched block came from (remote: imported from Redis)
    std::vector<uint32_t> loading;   // entries whose loads this sequence waits on (locked)
    bool settled = true;
    int64_t cached_tokens = 0;
    TierTokens reuse;
    MissCounts miss;         // why the uncached prompt tokens missed
    bool explained = false;  // miss came from ExplainMisses (counted in the totals)
  };

  PrefixMatch Match(std::span<const int32_t> tokens, const CacheRequest& request, KvCacheManager* owner);
  void ReleaseMatch(PrefixMatch* m);
  void ExplainMisses(PrefixMatch* m, std::span<const int32_t> tokens);
  void LimitMatch(PrefixMatch* m, int64_t max_tokens);
  Status AllocateSequence(SeqId id, PrefixMatch&& match, int64_t total_tokens, std::vector<BlockId>* table);
  bool PromotionReady(SeqId id, std::vector<BlockId>* table);
  void CommitFullBlock(SeqId id, int block_index, std::span<const int32_t> tokens);
  void FreeSequence(SeqId id);
  Status Append(SeqId id, int64_t n_new, std::vector<BlockId>* table);
  Status TruncateSequence(SeqId id, int64_t n_tokens, std::vector<BlockId>* table);  // kv_cache_truncate.cc
  // Finishes done copies, then settles the sequences whose loads all landed.
  void ProcessCompletions();
  void WaitAll() { alloc_->WaitAll(); }
  Status CheckIntegrity() const;
  // The facade's verbs that only combine parts.
  void Tick();
  Status Flush();
  bool CanAppend(SeqId id, int64_t n_new) const;
  PrefixHintResult ApplyPrefixHint(std::span<const int32_t> prefix, const CacheRequest& request, PrefixAction action,
                                   double ttl_s);
  CacheCounters Counters() const;
  bool DrainRemoteWrites(double timeout_s);

  // Remote tier (kv_cache_remote.cc).
  void StartRemoteLookup(SeqId id, std::span<const int32_t> tokens, const CacheRequest& request);
  bool RemoteLookupPending(SeqId id);
  int64_t remote_lookups_pending() const { return int64_t(remote_waits_.size()); }
  // Takes the blocks of finished lookups into the device tier.
  void ImportRemoteBlocks();
  RemoteCounters RemoteSnapshot() const;

  const Seq& seq(SeqId id) const;
  int64_t CachedTokens(SeqId id) const;
  int64_t device_blocks() const { return store_.device().capacity(); }
  uint8_t* DeviceBlockPtr(BlockId id) { return store_.device().KernelPtr(id); }
  void SetBlockObserver(KvBlockObserver* observer) { store_.index().set_observer(observer); }
  void Hint(const std::string& session, double ttl_s) { retention_.Hint(session, ttl_s); }
  void ReleaseSession(const std::string& session) { retention_.Release(session); }
  int64_t BlocksFor(int64_t tokens) const { return (tokens + page_ - 1) / page_; }
  bool CanAllocate(int64_t n) const { return alloc_->CanAllocateDevice(n); }

  const KvCacheConfig& config() const { return cfg_; }
  HintCounters hint_counters() { return hints_->counters(); }
  bool DroppedByPolicy(const BlockHash& h) const { return hints_->DroppedByPolicy(h); }

 private:
  int32_t AllocDeviceSlot();
  std::vector<Tier> UsableTiers(std::span<const uint32_t> chain, MatchStop* stop);
  // Opens / closes table slots [from, end) for the forward pass.
  void OpenForKernels(const Seq& s, size_t from);
  void CloseForKernels(const Seq& s, size_t from);
  bool Settle(SeqId id, Seq& s);
  void SettleAll();
  void Touch(IndexEntry& e, int32_t session);

  KvCacheConfig cfg_;
  int page_;
  TierStore store_;
  SessionRetention retention_;
  std::unique_ptr<EvictionPolicy> policy_;
  std::unique_ptr<TierMover> mover_;
  std::unique_ptr<TierAllocator> alloc_;
  std::unique_ptr<PrefixHints> hints_;  // KV hints and session quotas
  std::unordered_map<SeqId, Seq> seqs_;
  std::unordered_set<SeqId> unsettled_;
  struct RemoteWait {
    double deadline_s = 0;  // NowSeconds() after which the scheduler stops waiting
    bool done = false;      // the lookup's blocks were imported
  };
  std::unordered_map<SeqId, RemoteWait> remote_waits_;
  int64_t remote_imported_ = 0;
  int64_t remote_abandoned_ = 0;
  int64_t match_locks_ = 0;  // entry locks held by live PrefixMatch handles
  uint64_t tick_ = 0;        // logical time of lookups and commits
};

}  // namespace pg
