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
  Move m{id, from, to, -1, to_slot};
  m.from_slot = store_.PinSource(id, from);
  store_.ClaimTarget(id, to, to_slot, from);
  store_.RefreshEntry(id);
  const uint64_t tag = next_tag_++;
  moves_.emplace(tag, m);
  Submit(tag, m, store_.index().at(id));
  return tag;
}

void TierMover::Submit(uint64_t tag, const Move& m, const IndexEntry& e) {
  BlockMedium* src = &store_.medium(m.from);
  BlockMedium* dst = &store_.medium(m.to);
  // Each medium reads the part of the reference it names blocks by: the slot, or the identity.
  BlockRef from{m.from_slot, e.hash, e.parent, e.depth, e.tokens};
  BlockRef to{m.to_slot, e.hash, e.parent, e.depth, e.tokens};
  const bool promotion = m.up() && m.from < kLocalTiers;
  const double delay = promotion ? load_delay_s_ : 0;
  StagingPool* pool = &store_.staging();
  const int lane = m.up() ? kLoadLane : kStoreLane;
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

void TierMover::Finish(const Move& m, const Status& st) {
  const bool read_ok = store_.UnpinSource(m.entry, m.from, m.from_slot, st);
  const bool ok = read_ok && st.ok();
  store_.ReleaseTarget(m.entry, m.to, m.to_slot, ok, st);
  if (ok) {
    CacheCounters& c = store_.counters();
    if (m.from < kLocalTiers && m.to < kLocalTiers) {  // the remote tier keeps its own counters
      TierCounters& from = c.tiers[m.from];
      from.bytes_out += int64_t(store_.block_bytes());
      ++(m.up() ? from.promotions : from.demotions);
    }
    if (m.to < kLocalTiers) c.tiers[m.to].bytes_in += int64_t(store_.medium(m.to).stored_bytes());
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
