// PrefixIndex: the map from chained block hash to the cached copies of that
// block in each tier, plus the per-tier eviction order.
//
// Entries form chains through their parent hashes (see block_hash.h). A chain
// can be broken (a middle entry evicted from every tier); entries below the
// break are unreachable and are evicted first. Child counts are kept by
// parent HASH, not by entry, so they stay right when a parent is erased and
// later re-inserted.
//
// Thread-safety: none; owned by the scheduler thread. Entry ids are stable
// while the entry lives; a freed id may be reused.
#pragma once

#include <array>
#include <cstdint>
#include <set>
#include <span>
#include <unordered_map>
#include <vector>

#include "base/kv_tier.h"
#include "base/status.h"
#include "kv/index/block_hash.h"
#include "kv/tier_table.h"

namespace pg {

// The copy of a block in one local tier. It is held once it has a place
// (a slot of a slot tier; in the disk tier, its file, written or being
// written) and ready once its bytes are valid.
struct TierCopy {
  static constexpr int32_t kFile = 0;  // the one place a block has in the disk tier
  int32_t slot = -1;                   // slot in that tier's arena (kFile on disk), -1 = none
  bool ready = false;                  // bytes valid (false while a copy into it runs)
  // The tier the bytes came from: the copy's own tier when computed here;
  // a device copy brought in from kRemoteTier is reported as tier "remote"
  // by its first reuse, which sets it back to the device.
  Tier filled_from = kDeviceTier;
  int32_t reads = 0;  // disk: file reads in flight (the file must not be evicted); slots count theirs in the pool
  bool held() const { return slot >= 0; }
  bool usable() const { return slot >= 0 && ready; }
  void Clear() { slot = -1, ready = false, filled_from = kDeviceTier; }  // in-flight reads stay counted
};

struct IndexEntry {
  BlockHash hash;
  BlockHash parent;             // hash of the previous block (the root for block 0)
  int32_t depth = 0;            // block index in its sequence; first token position = depth * page_tokens
  std::vector<int32_t> tokens;  // page_tokens tokens, compared on every hit

  std::array<TierCopy, kLocalTiers> copies{};  // indexed by Tier; the device copy is the one the kernels read
  int32_t locks = 0;                           // PrefixMatch handles / sequences waiting on loads

  uint64_t last_tick = 0;  // logical time of the last use (eviction order)
  double last_use_s = 0;   // clock time of the last use
  uint32_t uses = 0;       // hits + commits
  int32_t session = -1;    // retention session, -1 = none

  TierCopy& copy(int t) { return copies[size_t(t)]; }
  const TierCopy& copy(int t) const { return copies[size_t(t)]; }
  bool in_tier(int t) const { return copy(t).held(); }
  // Bit t set when the entry holds a copy in tier t.
  uint8_t held_mask() const {
    uint8_t m = 0;
    for (int t = 0; t < kLocalTiers; ++t)
      if (copy(t).held()) m |= uint8_t(1u << t);
    return m;
  }
  bool in_any_tier() const { return held_mask() != 0; }
  // The highest tier with a usable copy, kNoTier when none is usable.
  int first_usable() const {
    for (int t = 0; t < kLocalTiers; ++t)
      if (copy(t).usable()) return t;
    return kNoTier;
  }

  // Bookkeeping owned by PrefixIndex.
  bool live = false;
  uint8_t present_mask = 0;    // tiers counted in the parent's child counts
  uint8_t evictable_mask = 0;  // tiers whose eviction set holds this entry
  uint64_t keyed_tick = 0;     // last_tick used in the eviction sets
};

class KvBlockObserver;

class PrefixIndex {
 public:
  static constexpr uint32_t kNone = UINT32_MAX;

  // Eviction order key: oldest use first; within one use, deepest block first
  // (so a conversation's tail goes before its middle); then id.
  struct EvictKey {
    uint64_t tick;
    int32_t neg_depth;
    uint32_t id;
    auto operator<=>(const EvictKey&) const = default;
  };

  uint32_t Find(const BlockHash& hash) const;
  // Adds an entry with no copies anywhere. PG_CHECKs that the hash is new.
  uint32_t Insert(const BlockHash& hash, const BlockHash& parent, int32_t depth, std::span<const int32_t> tokens);
  // Removes an entry; it must have no copies, no locks (PG_CHECK).
  void Erase(uint32_t id);

  IndexEntry& at(uint32_t id) { return entries_[id]; }
  const IndexEntry& at(uint32_t id) const { return entries_[id]; }
  size_t size() const { return map_.size(); }
  uint32_t id_limit() const { return uint32_t(entries_.size()); }

  // Call after changing an entry's tier fields or last_tick: updates the
  // parent's child counts and the eviction sets (evictable_mask: bit t set
  // when the entry may be evicted from tier t now).
  void Refresh(uint32_t id, uint8_t evictable_mask);

  // Children of `hash` present in tier t / in any tier.
  int32_t children_in(const BlockHash& hash, int t) const;
  int32_t children_any(const BlockHash& hash) const;

  const std::set<EvictKey>& evictable(int t) const { return evict_[t]; }

  // Longest chain from `root` whose blocks match `tokens` (page_tokens each,
  // at most max_blocks), hashed under `key` as root was; appends entry ids
  // to *out. Stops at the first miss or token mismatch.
  void MatchChain(const BlockHash& root, std::span<const int32_t> tokens, int page_tokens, int64_t max_blocks,
                  const BlockHashKey& key, std::vector<uint32_t>* out) const;

  // Told of every tier that starts or stops holding an entry (null = none).
  // The blocks already held are reported to it at once, parents first.
  void set_observer(KvBlockObserver* observer);

  // Child counts, map and eviction sets agree with the entries.
  Status CheckIntegrity() const;

 private:
  KvBlockObserver* observer_ = nullptr;
  struct ChildCounts {
    int32_t in_tier[kLocalTiers] = {0, 0, 0};
    int32_t any = 0;
  };
  void AdjustChildren(const BlockHash& parent, uint8_t old_mask, uint8_t new_mask);

  std::vector<IndexEntry> entries_;
  std::vector<uint32_t> free_ids_;
  std::unordered_map<BlockHash, uint32_t, BlockHashHasher> map_;
  std::unordered_map<BlockHash, ChildCounts, BlockHashHasher> children_;  // by parent hash
  std::set<EvictKey> evict_[kLocalTiers];
};

}  // namespace pg
