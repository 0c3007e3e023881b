#include "kv/movement/tier_allocator.h"

#include <algorithm>
#include <unordered_map>

#include "base/check.h"

namespace pg {

TierAllocator::TierAllocator(TierStore& store, TierMover& mover, const EvictionPolicy& policy,
                             const SessionRetention& retention, WritePolicy write_policy)
    : store_(store), mover_(mover), policy_(policy), retention_(retention), write_policy_(write_policy) {}

int64_t TierAllocator::EvictableDevice() const { return int64_t(store_.index().evictable(kDeviceTier).size()); }

int64_t TierAllocator::DrainingDevice() const {
  if (mover_.empty()) return 0;
  std::unordered_map<int32_t, int32_t> pins;  // slot -> moves pinning it
  for (const auto& [tag, m] : mover_.moves())
    if (const int32_t s = m.slot_in(kDeviceTier); s >= 0) pins[s]++;
  int64_t n = 0;
  const SlotTier& dev = store_.device();
  for (const auto& [slot, k] : pins) {
    const int32_t owner = dev.owner(slot);
    if (owner < 0 || dev.refcount(slot) != k) continue;  // private, or a sequence uses it
    const IndexEntry& e = store_.index().at(uint32_t(owner));
    if (e.locks == 0 && e.copy(kDeviceTier).ready) ++n;
  }
  return n;
}

bool TierAllocator::CanAllocateDevice(int64_t n) const {
  const int64_t now = store_.device().n_free() + EvictableDevice();
  return n <= 0 || now >= n || now + DrainingDevice() >= n;
}

uint32_t TierAllocator::PickVictim(int tier, bool need_clean) const {
  return policy_.PickVictim(tier, need_clean, store_.eviction_context(retention_));
}

uint64_t TierAllocator::CopyDown(uint32_t id, int tier, bool may_wait) {
  const int below = store_.below(tier);
  if (below == kNoTier || !store_.writable(below) || store_.index().at(id).in_tier(below)) return 0;
  if (below == kDiskTier) return StartWriteToDisk(id, tier);
  const int32_t hs = AllocHostSlot(may_wait);
  return hs >= 0 ? StartCopyToHost(id, hs) : 0;
}

bool TierAllocator::EvictOne(int tier, bool may_wait) {
  const uint32_t v = PickVictim(tier, !may_wait);
  if (v == PrefixIndex::kNone) return false;
  if (tier == kDiskTier) store_.disk()->Remove(store_.index().at(v).hash);  // the lowest tier: nothing below
  if (const uint64_t tag = CopyDown(v, tier, may_wait); tag != 0) WaitFor(tag);
  const IndexEntry& e = store_.index().at(v);
  store_.counters().tiers[tier].evictions++;
  // Dropped past a full slot tier below: a bigger one would have taken it
  // now (noted first, so this tier stays the one it left last).
  if (const int below = store_.below(tier); below != kNoTier && below < kSlotTiers && !e.in_tier(below))
    store_.accounting().NoteEvicted(below, e.hash);
  store_.accounting().NoteEvicted(tier, e.hash);
  store_.DropCopy(v, tier);
  return true;
}

void TierAllocator::PrepareDeviceRoom(int64_t n) {
  if (!store_.host_enabled()) return;
  for (int64_t k = store_.device().n_free(); k < n; ++k) {
    const uint32_t v = PickVictim(kDeviceTier, false);
    if (v == PrefixIndex::kNone || store_.index().at(v).copy(kHostTier).slot >= 0) return;
    const int32_t hs = AllocHostSlot(false);
    if (hs < 0) return;
    room_moves_.push_back(StartCopyToHost(v, hs));  // pins the slot: the next PickVictim sees another block
  }
}

bool TierAllocator::MakingRoom() {
  std::erase_if(room_moves_, [&](uint64_t tag) { return !mover_.in_flight(tag); });
  return !room_moves_.empty();
}

int32_t TierAllocator::AllocDeviceSlot() {
  for (;;) {
    const int32_t s = store_.device().Allocate();
    if (s >= 0) return s;
    // PrepareDeviceRoom's victims (the coldest blocks) are dropped without
    // another copy once their copies land; evicting past them while they
    // are pinned would copy other blocks down too.
    if (MakingRoom() && WaitForAnyMove()) continue;
    if (EvictOne(kDeviceTier, true)) continue;
    if (!WaitForAnyMove()) return -1;  // a demotion in flight may free a slot
  }
}

int32_t TierAllocator::AllocHostSlot(bool may_wait) {
  if (!store_.host_enabled()) return -1;
  for (;;) {
    const int32_t s = store_.host().Allocate();
    if (s >= 0) return s;
    if (EvictOne(kHostTier, may_wait)) continue;
    if (!may_wait || !WaitForAnyMove()) return -1;  // copies in flight pin host slots
  }
}

bool TierAllocator::MakeDiskRoom() {
  while (store_.disk_full()) {
    if (EvictOne(kDiskTier, true)) continue;
    if (!WaitForAnyMove()) return false;  // writes in flight count as used
  }
  return true;
}

uint64_t TierAllocator::StartWriteToDisk(uint32_t id, int from) {
  if (!store_.disk_writable() || !MakeDiskRoom()) return 0;
  return mover_.Start(id, Tier(from), kDiskTier);
}

uint64_t TierAllocator::StartCopyToHost(uint32_t id, int32_t host_slot) {
  const uint64_t tag = mover_.Start(id, kDeviceTier, kHostTier, host_slot);
  store_.Unref(kHostTier, host_slot);  // the move's pin keeps the slot; it is cached once the copy lands
  return tag;
}

uint64_t TierAllocator::StartLoad(uint32_t id, int32_t device_slot) {
  const IndexEntry& e = store_.index().at(id);
  int from = store_.below(kDeviceTier);  // the nearest tier with a usable copy
  while (from != kNoTier && !e.copy(from).usable()) from = store_.below(from);
  PG_CHECK_MSG(from != kNoTier, "StartLoad: no usable copy below the device");
  return mover_.Start(id, Tier(from), kDeviceTier, device_slot);
}

void TierAllocator::TrimDisk() {
  while (store_.disk_over_cap() && EvictOne(kDiskTier, false)) {
  }
}

void TierAllocator::WriteThrough(uint32_t id) { CopyDown(id, kDeviceTier, false); }

void TierAllocator::CleanInBackground() {
  if (!store_.host_enabled()) return;  // write-back cleaning runs with a host tier only
  const PrefixIndex& index = store_.index();
  for (int tier = 0; tier < kSlotTiers; ++tier) {
    const SlotTier& slots = store_.slots(tier);
    const int below = store_.below(tier);
    if (below == kNoTier || !store_.writable(below) || slots.n_free() >= std::max<int64_t>(1, slots.capacity() / 8))
      continue;
    std::vector<uint32_t> todo;
    for (auto it = index.evictable(tier).begin(); it != index.evictable(tier).end() && todo.size() < 8; ++it) {
      if (!index.at(it->id).in_tier(below)) todo.push_back(it->id);
    }
    for (uint32_t id : todo)
      if (CopyDown(id, tier, false) == 0) break;
  }
}

void TierAllocator::Collect(bool wait) {
  mover_.Collect(wait, [this](const TierMover::Move& m) {
    // Write-through: a copy down from the device goes on down the table.
    if (write_policy_ == WritePolicy::kWriteThrough && m.from == kDeviceTier && m.to == kHostTier)
      CopyDown(m.entry, m.to, false);
  });
}

bool TierAllocator::WaitForAnyMove() {
  if (mover_.empty()) return false;
  Collect(true);
  return true;
}

void TierAllocator::WaitFor(uint64_t tag) {
  while (mover_.in_flight(tag)) Collect(true);
}

void TierAllocator::WaitAll() {
  while (!mover_.empty()) Collect(true);
}

Status TierAllocator::Flush() {
  WaitAll();
  if (!store_.disk_enabled()) return Status::Ok();
  const PrefixIndex& index = store_.index();
  for (uint32_t id = 0; id < index.id_limit() && store_.disk_writable(); ++id) {
    const IndexEntry& e = index.at(id);
    if (!e.live || e.in_tier(kDiskTier)) continue;
    int from = kSlotTiers - 1;  // the slot copy nearest the disk
    while (from >= 0 && !e.copy(from).usable()) --from;
    if (from < 0) continue;
    if (StartWriteToDisk(id, from) == 0) break;
  }
  WaitAll();
  if (!store_.disk_writable()) return IoError("kv disk tier: writes are stopped; flush incomplete");
  return Status::Ok();
}

}  // namespace pg
