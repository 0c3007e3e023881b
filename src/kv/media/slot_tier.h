// SlotTier: one memory tier of block slots, the BlockMedium of the device and
// host tiers. It keeps the arena that holds the bytes, the pool that counts
// references, and the owner table that names the index entry whose cached
// copy each slot holds. The cache has one for the device tier and one for the
// host tier; the disk tier is DiskTier, the remote tier RemoteTier.
//
// A slot is in exactly one state:
//   free    on the pool's free list, no owner;
//   held    refcount > 0: sequences whose block table lists it (device only)
//           and in-flight moves that read or write it;
//   cached  refcount 0, owned by an index entry: evictable unless the entry
//           is locked.
// A held slot may also be owned (a sequence shares a published block).
//
// Thread-safety: none; the scheduler thread owns it, except the BlockMedium
// calls, which mover threads make on slots pinned for them (BlockArena's
// rules). Only the host tier lends its RAM as Staging.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "base/status.h"
#include "kv/accounting/cache_counters.h"
#include "kv/index/prefix_index.h"
#include "kv/media/block_arena.h"
#include "kv/media/block_medium.h"
#include "kv/media/block_pool.h"

namespace pg {

inline constexpr int kSlotTiers = 2;  // kDeviceTier and kHostTier are slot tiers

class SlotTier final : public BlockMedium {
 public:
  static constexpr int32_t kNoOwner = -1;
  // Makes the arena of n_slots slots of block_bytes (KvCacheConfig::device_arena).
  using ArenaFactory = std::function<Result<std::unique_ptr<BlockArena>>(int64_t n_slots, size_t block_bytes)>;

  SlotTier() = default;  // no slots (a disabled tier)
  SlotTier(SlotTier&&) = default;
  SlotTier& operator=(SlotTier&&) = default;
  // `tier` is kDeviceTier or kHostTier (names the entry field owners point back
  // from). make_arena empty = a HostBlockArena from `memory`.
  static Result<SlotTier> Create(Tier tier, int64_t n_slots, size_t block_bytes, const ArenaFactory& make_arena = {},
                                 const HostMemory& memory = {});

  Tier tier() const override { return tier_; }
  Pinning pinning() const override { return Pinning::kSlot; }
  uint64_t stored_bytes() const override { return arena_ ? arena_->block_bytes() : 0; }
  // BlockMedium: the bytes of b.slot, through the arena's asynchronous copy
  // calls, waited for before they return.
  Status Read(const BlockRef& b, uint8_t* dst) override;
  Status Write(const BlockRef& b, const uint8_t* src) override;
  uint8_t* Staging(const BlockRef& b) override;
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

  // Address of slot `slot` for the forward pass (block_bytes, 64-byte
  // aligned, stable); the cache itself copies only through Read / Write.
  uint8_t* KernelPtr(int32_t slot) { return arena_->BlockPtr(slot); }
  BlockArena& arena() { return *arena_; }

  // Refcounts equal `holders` (per slot); owned slots are in use and their
  // entry's copy in this tier points back; no slot leaks (in use, no holder,
  // no owner). Internal error naming the first violation.
  Status CheckIntegrity(std::span<const int32_t> holders, const PrefixIndex& index) const;
  // Occupancy fields of *t (capacity, used, cached, pinned, bytes).
  void FillOccupancy(size_t block_bytes, TierCounters* t) const;

 private:
  SlotTier(Tier tier, std::unique_ptr<BlockArena> arena, int64_t n_slots);

  Tier tier_ = kHostTier;
  std::unique_ptr<BlockArena> arena_;
  BlockPool pool_{0};
  std::vector<int32_t> owner_;  // per slot: index entry id or kNoOwner
};

}  // namespace pg
