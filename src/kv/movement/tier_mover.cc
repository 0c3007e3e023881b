#include "kv/movement/tier_mover.h"

#include <chrono>
#include <thread>

#include "base/check.h"
#include "base/log.h"

namespace pg {

TierMover::TierMover(TierStore& store, int io_threads) : store_(store), mover_(kLanes, io_threads) {
  PG_CHECK_MSG(store_.staging().n_buffers() >= int64_t(kLanes) * io_threads,
               "kv staging: fewer buffers than mover threads");
}

uint64_t TierMover::Start(uint32_t id, Tier from, Tier to, int32_t to_slot) {
  IndexEntry& e = store_.index().at(id);
  Move m{id, from, to, -1, to_slot};
  BeginRead(e, m);
  BeginWrite(id, e, m);
  store_.RefreshEntry(id);
  const uint64_t tag = next_tag_++;
  moves_.emplace(tag, m);
  Submit(tag, m, e);
  return tag;
}

// The source side: pin the slot read, or count the file read.
void TierMover::BeginRead(IndexEntry& e, Move& m) {
  if (IsSlotTier(m.from)) {
    PG_CHECK(e.copy(m.from).usable());
    m.from_slot = e.copy(m.from).slot;
    store_.slots(m.from).Ref(m.from_slot);
  } else if (m.from == kDiskTier) {
    PG_CHECK(e.disk.present);
    e.disk.reads++;
  }
}

// The target side: the copy exists, not ready; pin the slot written, or count the file.
void TierMover::BeginWrite(uint32_t id, IndexEntry& e, const Move& m) {
  if (IsSlotTier(m.to)) {
    PG_CHECK(m.to_slot >= 0 && e.copy(m.to).slot < 0);
    e.copy(m.to) = SlotCopy{m.to_slot, false, m.from};
    store_.slots(m.to).SetOwner(m.to_slot, id);
    store_.slots(m.to).Ref(m.to_slot);
  } else if (m.to == kDiskTier) {
    PG_CHECK(store_.disk_writable() && !store_.disk_full());
    PG_CHECK(!e.disk.present && !e.disk.writing);
    e.disk.writing = true;
    store_.CountDiskFile(+1);
  }
}

void TierMover::Submit(uint64_t tag, const Move& m, const IndexEntry& e) {
  BlockMedium* src = &store_.medium(m.from);
  BlockMedium* dst = &store_.medium(m.to);
  auto ref = [&e](Tier t, int32_t slot) {  // a slot names a block in a slot tier; the identity elsewhere
    BlockRef r;
    r.slot = slot;
    if (!IsSlotTier(t)) r = BlockRef{-1, e.hash, e.parent, e.depth, e.tokens};
    return r;
  };
  BlockRef from = ref(m.from, m.from_slot), to = ref(m.to, m.to_slot);
  const bool promotion = m.to == kDeviceTier && (m.from == kHostTier || m.from == kDiskTier);
  const double delay = promotion ? load_delay_s_ : 0;
  StagingPool* pool = &store_.staging();
  const int lane = m.to == kDeviceTier ? kLoadLane : kStoreLane;
  mover_.Submit(lane, tag, [src, dst, from = std::move(from), to = std::move(to), delay, pool]() -> Status {
    if (delay > 0) std::this_thread::sleep_for(std::chrono::duration<double>(delay));
    if (uint8_t* h = dst->Staging(to)) return src->Read(from, h);
    if (uint8_t* h = src->Staging(from)) return dst->Write(to, h);
    uint8_t* staging = pool->Acquire();  // pinned when the device is in use
    Status st = src->Read(from, staging);
    if (st.ok()) st = dst->Write(to, staging);
    pool->Release(staging);
    return st;
  });
}

// Unpins the source; a failed disk read drops the file. False when the
// source failed (the target is then given up).
bool TierMover::EndRead(IndexEntry& e, const Move& m, const Status& st) {
  if (IsSlotTier(m.from)) {
    store_.Unref(m.from, m.from_slot);
    return true;
  }
  if (m.from != kDiskTier) return st.ok();
  e.disk.reads--;
  if (st.ok()) return true;
  PG_LOG_WARN("kv disk tier: block load failed, recomputing: {}", st.ToString());
  store_.counters().disk.errors++;
  if (st.code() == StatusCode::kIoError) store_.disk()->Remove(e.hash);
  PG_CHECK(e.disk.present);
  e.disk.present = false;
  store_.CountDiskFile(-1);
  return false;
}

// Makes the target copy ready (ok) or gives it up, unpins it.
void TierMover::EndWrite(IndexEntry& e, const Move& m, bool ok, const Status& st) {
  if (IsSlotTier(m.to)) {
    if (ok) {
      e.copy(m.to).ready = true;
    } else {
      e.copy(m.to) = SlotCopy{};  // a device slot becomes its sequence's private block
      store_.slots(m.to).Disown(m.to_slot);
    }
    store_.Unref(m.to, m.to_slot);
  } else if (m.to == kDiskTier) {
    e.disk.writing = false;
    if (ok) {
      e.disk.present = true;
    } else {
      store_.CountDiskFile(-1);
      store_.DisableDiskWrites(st);
    }
  }
}

void TierMover::Finish(const Move& m, const Status& st) {
  IndexEntry& e = store_.index().at(m.entry);
  const bool read_ok = EndRead(e, m, st);
  const bool ok = read_ok && st.ok();
  EndWrite(e, m, ok, st);
  if (ok) {
    CacheCounters& c = store_.counters();
    const int64_t bytes = int64_t(store_.block_bytes());
    if (m.from < kLocalTiers && m.to < kLocalTiers) {  // the remote tier keeps its own counters
      c.of_tier(m.from).bytes_out += bytes;
      (m.to == kDeviceTier ? c.of_tier(m.from).promotions : c.of_tier(m.from).demotions)++;
    }
    if (m.to < kLocalTiers)
      c.of_tier(m.to).bytes_in += m.to == kDiskTier ? int64_t(store_.disk()->file_bytes()) : bytes;
  }
  store_.RefreshEntry(m.entry);
  store_.MaybeErase(m.entry);
}

void TierMover::Collect(bool wait, FunctionRef<void(const Move&)> then) {
  if (mover_.in_flight() == 0) return;
  std::vector<BlockMover::Done> done;
  mover_.Collect(&done, wait);
  for (auto& d : done) {
    auto it = moves_.find(d.tag);
    PG_CHECK(it != moves_.end());
    const Move m = it->second;
    moves_.erase(it);
    Finish(m, d.status);
    then(m);
  }
}

void TierMover::CountPins(std::span<int32_t> device_holders, std::span<int32_t> host_holders) const {
  for (const auto& [tag, m] : moves_) {
    if (const int32_t s = m.slot_in(kDeviceTier); s >= 0) device_holders[size_t(s)]++;
    if (const int32_t s = m.slot_in(kHostTier); s >= 0) host_holders[size_t(s)]++;
  }
}

}  // namespace pg
