// MissAccounting: classifies the uncached tokens of a prompt (miss_counts.h)
// and keeps the totals behind the miss-reason and what-if counters.
//
// It owns the two bounded memories the classification needs: BlockHistory
// (every block ever published, every parent that ever had a child) and
// GhostIndex (recent evictions per tier, in order). TierStore feeds them:
// NotePublished when an entry is inserted, NoteEvicted when a tier drops a
// block to make room.
//
// Attribution, block by block from the first unmatched full block f:
//   block f:   present in a tier   -> the stop reason (short hit, policy hook,
//                                     cache off) or, with no stop, policy
//                                     (the len - 1 rule keeps the last block)
//              copy not ready      -> loading
//              in a ghost / seen   -> evicted (tier left last)
//              unknown, f >= 1 and its parent has or had another child -> diverged
//              otherwise           -> never_seen
//   block i>f: present             -> the reason of block f (the chain broke there)
//              not ready           -> loading
//              evicted             -> evicted
//              unknown             -> diverged when f diverged, else never_seen
//   the partial last block (never published) -> never_seen;
//   with the cache off every token is policy.
// What-if: from block f on, a block counts as a would-be hit for "K more
// blocks in tier t" while each block is present or remembered by t's ghost
// with rank < K (GhostIndex); the run stops at the first block that is not.
//
// Thread-safety: none; the scheduler thread owns it.
#pragma once

#include <cstdint>
#include <functional>
#include <span>

#include "kv/accounting/block_history.h"
#include "kv/accounting/cache_counters.h"
#include "kv/accounting/ghost_index.h"
#include "kv/accounting/miss_counts.h"
#include "kv/index/prefix_index.h"
#include "kv/tier_table.h"

namespace pg {

class MissAccounting {
 public:
  struct Config {
    size_t block_bytes = 0;
    int page_tokens = 0;
    TierTable tiers;               // the tiers the cache has (TierStore::tiers)
    uint64_t disk_file_bytes = 0;  // bytes one block takes on disk (0 = block_bytes)
    int64_t ghost_blocks = -1;     // per tier; -1 = enough for the largest what-if point, in [1024, 2^18]
    std::function<double()> clock;
    BlockHashKey hash_key;  // the chain's key (KvCacheConfig::hash_key)
  };
  MissAccounting() = default;
  void Configure(const Config& c);

  // Feeds from TierStore / TierAllocator.
  void NotePublished(const BlockHash& hash, const BlockHash& parent);
  void NoteEvicted(int tier, const BlockHash& hash);
  // Blocks served from `found_tier` come back: forget their ghosts above it.
  void NoteReused(const BlockHash& hash, int found_tier) { ghost_.Forget(Fingerprint(hash), found_tier); }

  // Classifies `tokens` given the matched chain (entry ids, in order). A
  // first missing block that `dropped_by_policy` says a quota took counts as
  // policy (and so do the misses after it).
  MissExplanation Explain(const PrefixIndex& index, const BlockHash& root, std::span<const uint32_t> matched,
                          std::span<const int32_t> tokens, MatchStop stop,
                          const std::function<bool(const BlockHash&)>& dropped_by_policy = {}) const;
  // Adds an explanation to the totals (once per admitted request).
  void Count(const MissExplanation& x);
  // Loads that failed after the match: `tokens` move from cached to loading.
  void CountFailedLoads(int64_t tokens);

  // Extra blocks of what-if point p.
  int64_t ExtraBlocks(int point) const { return extra_blocks_[point]; }
  // Copies the totals into c (miss, whatif, explained_*).
  void Fill(CacheCounters* c) const;
  const GhostIndex& ghost() const { return ghost_; }

 private:
  enum class Status : uint8_t { kPresent, kNotReady, kEvicted, kUnknown };
  enum class Why : uint8_t { kNever, kEvicted, kDiverged, kLoading, kPolicy };
  Why ReasonOf(Status st, const Why* first, const PrefixIndex& index, const BlockHash& parent, int64_t f) const;
  Status StatusOf(const PrefixIndex& index, const BlockHash& h, std::span<const int32_t> block, int* tier,
                  double* evicted_at) const;
  int GhostTierFor(int whatif_tier) const;
  void ExtendWhatIf(Status st, const BlockHash& h, bool first_miss, bool* run, MissExplanation* x) const;

  Config cfg_;
  BlockHistory history_;
  GhostIndex ghost_;
  int64_t extra_blocks_[kWhatIfPoints] = {};
  CacheCounters::MissTotals totals_;
  int64_t would_hit_[kWhatIfPoints] = {};  // totals of MissExplanation::would_hit
};

}  // namespace pg
