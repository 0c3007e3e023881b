// SlotTier: one memory tier of block slots. It keeps the arena that holds the
// bytes, the pool that counts references, and the owner table that names the
// index entry whose cached copy each slot holds. The cache has one for the
// device tier and one for the host tier; the disk tier is DiskTier.
//
// A slot is in exactly one state:
//   free    on the pool's free list, no owner;
//   held    refcount > 0: sequences whose block table lists it (device only)
//           and in-flight moves that read or write it;
//   cached  refcount 0, owned by an index entry: evictable unless the entry
//           is locked.
// A held slot may also be owned (a sequence shares a published block).
//
// Thread-safety: none; the scheduler thread owns it. The bytes behind Ptr()
// follow BlockArena's rules (mover threads copy slots pinned for them).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <vector>

#include "base/status.h"
#include "kv/accounting/cache_counters.h"
#include "kv/index/prefix_index.h"
#include "kv/media/block_arena.h"
#include "kv/media/block_pool.h"

namespace pg {

class SlotTier {
 public:
  static constexpr int32_t kNoOwner = -1;

  SlotTier() = default;  // no slots (a disabled tier)
  // `tier` is kDeviceTier or kHostTier (names the entry field owners point back from).
  static Result<SlotTier> Create(int tier, int64_t n_slots, size_t block_bytes);

  int tier() const { return tier_; }
  int64_t capacity() const { return pool_.capacity(); }
  int64_t n_free() const { return pool_.n_free(); }
  bool enabled() const { return capacity() > 0; }

  // A free slot with refcount 1 and no owner; -1 when none is free.
  int32_t Allocate() { return pool_.Allocate(); }
  void Ref(int32_t slot) { pool_.Ref(slot); }
  // Drops one reference. A private slot that nothing holds any more is freed.
  // Returns the owner entry when an owned slot just became cached (its
  // eviction state changed), kNoOwner otherwise.
  int32_t Unref(int32_t slot);
  int32_t refcount(int32_t slot) const { return pool_.refcount(slot); }

  int32_t owner(int32_t slot) const { return owner_[size_t(slot)]; }
  void SetOwner(int32_t slot, uint32_t entry) { owner_[size_t(slot)] = int32_t(entry); }
  // Forgets the owner; the slot is freed when nothing holds it.
  void Disown(int32_t slot);

  // block_bytes() of slot `slot`, 64-byte aligned, stable.
  uint8_t* Ptr(int32_t slot) { return arena_->BlockPtr(slot); }
  BlockArena& arena() { return *arena_; }

  // Refcounts equal `holders` (per slot); owned slots are in use and their
  // entry's copy in this tier points back; no slot leaks (in use, no holder,
  // no owner). Internal error naming the first violation.
  Status CheckIntegrity(std::span<const int32_t> holders, const PrefixIndex& index) const;
  // Occupancy fields of *t (capacity, used, cached, pinned, bytes).
  void FillOccupancy(size_t block_bytes, TierCounters* t) const;

 private:
  SlotTier(int tier, std::unique_ptr<BlockArena> arena, int64_t n_slots);

  int tier_ = kHostTier;
  std::unique_ptr<BlockArena> arena_;
  BlockPool pool_{0};
  std::vector<int32_t> owner_;  // per slot: index entry id or kNoOwner
};

}  // namespace pg
