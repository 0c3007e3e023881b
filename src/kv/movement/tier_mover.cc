#include "kv/movement/tier_mover.h"

#include <chrono>
#include <cstring>
#include <thread>

#include "base/check.h"
#include "base/log.h"

namespace pg {

TierMover::TierMover(TierStore& store, int io_threads) : store_(store), mover_(io_threads) {}

uint64_t TierMover::StartWriteToHost(uint32_t id, int32_t host_slot) {
  IndexEntry& e = store_.index().at(id);
  PG_CHECK(e.device.usable() && e.host.slot < 0);
  e.host = SlotCopy{host_slot, false};  // refcount 1 from Allocate = the move's pin
  store_.host().SetOwner(host_slot, id);
  store_.device().Ref(e.device.slot);
  store_.RefreshEntry(id);
  return Submit(Move{Kind::kDeviceToHost, id, e.device.slot, host_slot});
}

uint64_t TierMover::StartWriteToDisk(uint32_t id, bool from_host) {
  PG_CHECK(store_.disk_writable() && !store_.disk_full());
  IndexEntry& e = store_.index().at(id);
  PG_CHECK(!e.disk.present && !e.disk.writing);
  Move m{from_host ? Kind::kHostToDisk : Kind::kDeviceToDisk, id, -1, -1};
  const int tier = from_host ? kHostTier : kDeviceTier;
  PG_CHECK(e.copy(tier).usable());
  (from_host ? m.host : m.device) = e.copy(tier).slot;
  store_.slots(tier).Ref(e.copy(tier).slot);
  e.disk.writing = true;
  store_.CountDiskFile(+1);
  store_.RefreshEntry(id);
  return Submit(m);
}

uint64_t TierMover::StartLoad(uint32_t id, int32_t device_slot) {
  IndexEntry& e = store_.index().at(id);
  PG_CHECK(e.device.slot < 0);
  e.device = SlotCopy{device_slot, false};
  store_.device().SetOwner(device_slot, id);
  store_.device().Ref(device_slot);  // the move's pin (the sequence holds the other reference)
  Move m{Kind::kDiskToDevice, id, device_slot, -1};
  if (e.host.usable()) {
    m.kind = Kind::kHostToDevice;
    m.host = e.host.slot;
    store_.host().Ref(e.host.slot);
  } else {
    PG_CHECK(e.disk.present);
    e.disk.reads++;
  }
  store_.RefreshEntry(id);
  return Submit(m);
}

uint64_t TierMover::Submit(const Move& m) {
  const uint64_t tag = next_tag_++;
  moves_.emplace(tag, m);
  const IndexEntry& e = store_.index().at(m.entry);
  const size_t bytes = store_.block_bytes();
  DiskTier* disk = store_.disk();
  switch (m.kind) {
    case Kind::kDeviceToHost: {
      uint8_t* src = store_.device().Ptr(m.device);
      uint8_t* dst = store_.host().Ptr(m.host);
      mover_.Submit(tag, [src, dst, bytes] {
        std::memcpy(dst, src, bytes);
        return Status::Ok();
      });
      break;
    }
    case Kind::kHostToDevice: {
      const uint8_t* src = store_.host().Ptr(m.host);
      BlockArena* dev = &store_.device().arena();
      mover_.Submit(tag, [dev, slot = m.device, src, delay = load_delay_s_] {
        if (delay > 0) std::this_thread::sleep_for(std::chrono::duration<double>(delay));
        dev->CopyIn(slot, src);
        return Status::Ok();
      });
      break;
    }
    case Kind::kDiskToDevice: {
      uint8_t* dst = store_.device().Ptr(m.device);
      mover_.Submit(tag, [disk, dst, hash = e.hash, tokens = e.tokens, delay = load_delay_s_] {
        if (delay > 0) std::this_thread::sleep_for(std::chrono::duration<double>(delay));
        Status st = disk->Read(hash, tokens, dst);
        if (st.code() == StatusCode::kCorrupt) disk->Remove(hash);
        return st;
      });
      break;
    }
    case Kind::kHostToDisk:
    case Kind::kDeviceToDisk: {
      const uint8_t* src = m.kind == Kind::kHostToDisk ? store_.host().Ptr(m.host) : store_.device().Ptr(m.device);
      DiskTier::BlockInfo info{e.hash, e.parent, e.depth, e.tokens};
      mover_.Submit(tag, [disk, src, info = std::move(info)] { return disk->Write(info, src); });
      break;
    }
  }
  return tag;
}

void TierMover::Finish(const Move& m, const Status& st) {
  IndexEntry& e = store_.index().at(m.entry);
  CacheCounters& c = store_.counters();
  const int64_t bytes = int64_t(store_.block_bytes());
  switch (m.kind) {
    case Kind::kDeviceToHost:
    case Kind::kHostToDevice: {
      const int from = m.kind == Kind::kDeviceToHost ? kDeviceTier : kHostTier;
      const int to = from == kDeviceTier ? kHostTier : kDeviceTier;
      e.copy(to).ready = true;
      c.of_tier(from).bytes_out += bytes;
      (from == kDeviceTier ? c.device.demotions : c.host.promotions)++;
      c.of_tier(to).bytes_in += bytes;
      store_.Unref(from, from == kDeviceTier ? m.device : m.host);
      store_.Unref(to, to == kDeviceTier ? m.device : m.host);
      break;
    }
    case Kind::kDiskToDevice:
      e.disk.reads--;
      if (st.ok()) {
        e.device.ready = true;
        c.disk.bytes_out += bytes;
        c.disk.promotions++;
        c.device.bytes_in += bytes;
      } else {
        PG_LOG_WARN("kv disk tier: block load failed, recomputing: {}", st.ToString());
        c.disk.errors++;
        if (st.code() == StatusCode::kIoError) store_.disk()->Remove(e.hash);
        PG_CHECK(e.disk.present);
        e.disk.present = false;
        store_.CountDiskFile(-1);
        e.device = SlotCopy{};  // the slot becomes the sequence's private block
        store_.device().Disown(m.device);
      }
      store_.Unref(kDeviceTier, m.device);
      break;
    case Kind::kHostToDisk:
    case Kind::kDeviceToDisk: {
      const int from = m.kind == Kind::kHostToDisk ? kHostTier : kDeviceTier;
      e.disk.writing = false;
      if (st.ok()) {
        e.disk.present = true;
        c.disk.bytes_in += int64_t(store_.disk()->file_bytes());
        c.of_tier(from).demotions++;
        c.of_tier(from).bytes_out += bytes;
      } else {
        store_.CountDiskFile(-1);
        store_.DisableDiskWrites(st);
      }
      store_.Unref(from, from == kHostTier ? m.host : m.device);
      break;
    }
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
    if (m.device >= 0) device_holders[size_t(m.device)]++;
    if (m.host >= 0) host_holders[size_t(m.host)]++;
  }
}

}  // namespace pg
