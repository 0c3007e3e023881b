#include "kv/media/slot_tier.h"

#include <fmt/format.h>

namespace pg {

SlotTier::SlotTier(Tier tier, std::unique_ptr<BlockArena> arena, int64_t n_slots)
    : tier_(tier), arena_(std::move(arena)), pool_(n_slots), owner_(size_t(n_slots), kNoOwner) {}

Result<SlotTier> SlotTier::Create(Tier tier, int64_t n_slots, size_t block_bytes, const ArenaFactory& make_arena,
                                  const HostMemory& memory) {
  std::unique_ptr<BlockArena> arena;
  if (make_arena) {
    PG_ASSIGN_OR_RETURN(arena, make_arena(n_slots, block_bytes));
    if (arena == nullptr || arena->n_blocks() != n_slots || arena->block_bytes() != block_bytes)
      return InvalidArgument("kv arena factory: wrong geometry");
  } else {
    PG_ASSIGN_OR_RETURN(arena, HostBlockArena::Create(n_slots, block_bytes, memory));
  }
  return SlotTier(tier, std::move(arena), n_slots);
}

// The mover thread waits on the copy's completion (a device arena's event)
// before the move is finished, so the block's target is whole before anyone
// reads it and its source is not reused before it has been read.
Status SlotTier::Read(const BlockRef& b, uint8_t* dst) { return arena_->CopyOutAsync(b.slot, dst).Wait(); }

Status SlotTier::Write(const BlockRef& b, const uint8_t* src) { return arena_->CopyInAsync(b.slot, src).Wait(); }

uint8_t* SlotTier::Staging(const BlockRef& b) { return tier_ == kHostTier ? arena_->BlockPtr(b.slot) : nullptr; }

int32_t SlotTier::Unref(int32_t slot) {
  if (pool_.Unref(slot) > 0) return kNoOwner;
  const int32_t entry = owner(slot);
  if (entry == kNoOwner) pool_.Release(slot);
  return entry;
}

void SlotTier::Disown(int32_t slot) {
  owner_[size_t(slot)] = kNoOwner;
  if (pool_.refcount(slot) == 0) pool_.Release(slot);
}

Status SlotTier::CheckIntegrity(std::span<const int32_t> holders, const PrefixIndex& index) const {
  PG_RETURN_IF_ERROR(pool_.CheckIntegrity());
  const char* name = TierName(tier_);
  for (int32_t slot = 0; slot < capacity(); ++slot) {
    const int32_t want = holders[size_t(slot)];
    if (pool_.refcount(slot) != want) {
      return Internal(fmt::format("{} slot {}: refcount {} but {} holders", name, slot, pool_.refcount(slot), want));
    }
    const int32_t entry = owner(slot);
    if (entry != kNoOwner) {
      if (pool_.is_free(slot)) return Internal(fmt::format("{} slot {}: free but owned", name, slot));
      if (entry >= int32_t(index.id_limit()) || !index.at(uint32_t(entry)).live ||
          index.at(uint32_t(entry)).copy(tier_).slot != slot) {
        return Internal(fmt::format("{} slot {}: owner {} does not point back", name, slot, entry));
      }
    } else if (!pool_.is_free(slot) && want == 0) {
      return Internal(fmt::format("{} slot {}: leaked (not free, no holder, no owner)", name, slot));
    }
  }
  return Status::Ok();
}

void SlotTier::FillOccupancy(size_t block_bytes, TierCounters* t) const {
  t->capacity_blocks = capacity();
  t->used_blocks = capacity() - n_free();
  t->cached_blocks = 0;
  t->pinned_blocks = 0;
  for (int32_t s = 0; s < capacity(); ++s) {
    t->cached_blocks += owner(s) != kNoOwner;
    t->pinned_blocks += pool_.refcount(s) > 0;
  }
  t->used_bytes = t->used_blocks * int64_t(block_bytes);
  t->capacity_bytes = t->capacity_blocks * int64_t(block_bytes);
}

}  // namespace pg
