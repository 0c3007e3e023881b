// SequenceTable: the sequences the cache serves and their block tables, and
// the verbs that build them (allocate from a match, settle the loads,
// commit a full block, grow, truncate, free). Its parts are the tiers':
// TierStore, TierAllocator, TierMover, PrefixHints; KvCacheManager::Impl
// owns it beside the prefix lookups and RemoteLookups.
//
// Device slot references (SlotTier refcount = holders): each sequence whose
// block table lists the slot holds one; each in-flight move that reads or
// writes it holds one. The slot's owner names the index entry whose cached
// copy it is (none for a sequence's private block). The slots of a settled
// sequence's table are open for kernels (BlockArena::OpenForKernels) until
// they leave it. Thread-safety: scheduler thread only.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "kv/kv_cache_manager.h"
#include "kv/media/tier_store.h"
#include "kv/movement/tier_allocator.h"
#include "kv/movement/tier_mover.h"
#include "kv/prefix_hints.h"
#include "kv/use_clock.h"

namespace pg {

class SequenceTable {
 public:
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

  SequenceTable(const KvCacheConfig& cfg, TierStore& store, TierAllocator& alloc, TierMover& mover, PrefixHints& hints,
                UseClock& clock)
      : cfg_(cfg),
        page_(cfg.layout.page_tokens),
        store_(store),
        alloc_(alloc),
        mover_(mover),
        hints_(hints),
        clock_(clock) {}

  // The verbs of KvCacheManager of the same names (kv_cache_manager.h).
  Status AllocateSequence(SeqId id, PrefixMatch&& match, int64_t total_tokens, std::vector<BlockId>* table);
  bool PromotionReady(SeqId id, std::vector<BlockId>* table);
  void CommitFullBlock(SeqId id, int block_index, std::span<const int32_t> tokens);
  void FreeSequence(SeqId id);
  bool CanAppend(SeqId id, int64_t n_new) const;
  Status Append(SeqId id, int64_t n_new, std::vector<BlockId>* table);
  Status TruncateSequence(SeqId id, int64_t n_tokens, std::vector<BlockId>* table);  // sequence_truncate.cc
  const Seq& seq(SeqId id) const;
  int64_t CachedTokens(SeqId id) const;

  // The tier a matched entry is served from: the nearest with a usable copy
  // (a locked match keeps one; the lowest local tier otherwise).
  static Tier ServingTier(const IndexEntry& e);
  // Finishes done copies, then settles the sequences whose loads all landed.
  void ProcessCompletions();
  int64_t BlocksFor(int64_t tokens) const { return (tokens + page_ - 1) / page_; }
  bool CanAllocate(int64_t n) const { return alloc_.CanAllocateDevice(n); }
  // The sequences against the tiers (sequence_integrity.cc): holders of
  // every slot recomputed from the block tables and the moves in flight;
  // entry locks = match_locks (live PrefixMatch handles) + the loads waited on.
  Status CheckIntegrity(int64_t match_locks) const;

 private:
  int32_t AllocDeviceSlot();
  // Opens / closes table slots [from, end) for the forward pass.
  void OpenForKernels(const Seq& s, size_t from);
  void CloseForKernels(const Seq& s, size_t from);
  bool Settle(SeqId id, Seq& s);
  void SettleAll();

  const KvCacheConfig& cfg_;
  int page_;
  TierStore& store_;
  TierAllocator& alloc_;
  TierMover& mover_;
  PrefixHints& hints_;
  UseClock& clock_;
  std::unordered_map<SeqId, Seq> seqs_;
  std::unordered_set<SeqId> unsettled_;
};

}  // namespace pg
