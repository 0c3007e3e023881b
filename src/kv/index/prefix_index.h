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

#include <cstdint>
#include <set>
#include <span>
#include <unordered_map>
#include <vector>

#include "base/kv_tier.h"
#include "base/status.h"
#include "kv/index/block_hash.h"

namespace pg {

// A copy of a block in a slot tier (device or host).
struct SlotCopy {
  int32_t slot = -1;   // slot in that tier's arena, -1 = none
  bool ready = false;  // bytes valid (false while a copy into the slot runs)
  // The tier the bytes came from: the slot's own tier when computed here;
  // a device copy brought in from kRemoteTier is reported as tier "remote"
  // by its first reuse, which sets it back to the device.
  Tier filled_from = kDeviceTier;
  bool usable() const { return slot >= 0 && ready; }
};

// The block's file in the disk tier.
struct FileCopy {
  bool present = false;  // a complete, indexed file exists
  bool writing = false;  // a file write is in flight
  int32_t reads = 0;     // file reads in flight (the file must not be evicted)
};

struct IndexEntry {
  BlockHash hash;
  BlockHash parent;             // hash of the previous block (the root for block 0)
  int32_t depth = 0;            // block index in its sequence; first token position = depth * page_tokens
  std::vector<int32_t> tokens;  // page_tokens tokens, compared on every hit

  SlotCopy device;  // the copy the kernels read
  SlotCopy host;
  FileCopy disk;
  int32_t locks = 0;  // PrefixMatch handles / sequences waiting on loads

  uint64_t last_tick = 0;  // logical time of the last use (eviction order)
  double last_use_s = 0;   // clock time of the last use
  uint32_t uses = 0;       // hits + commits
  int32_t session = -1;    // retention session, -1 = none

  // The slot copy of a slot tier (kDeviceTier or kHostTier).
  SlotCopy& copy(int t) { return t == kDeviceTier ? device : host; }
  const SlotCopy& copy(int t) const { return t == kDeviceTier ? device : host; }
  bool in_tier(int t) const { return t == kDiskTier ? (disk.present || disk.writing) : copy(t).slot >= 0; }

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
