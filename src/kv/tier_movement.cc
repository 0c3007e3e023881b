// KvCacheManager::Impl, part 2: eviction, demotion, promotion and the
// completions of background moves. See kv_cache_manager_impl.h for slot
// ownership.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <tuple>

#include "base/check.h"
#include "base/log.h"
#include "base/units.h"
#include "kv/kv_cache_manager_impl.h"

namespace pg {

namespace {

// Victims are chosen among this many oldest evictable blocks of a tier.
constexpr int kCandidates = 64;
// Relative reload costs per token (recompute of one token at position 0 = 1).
constexpr double kHostReloadPerToken = 0.02;
constexpr double kDiskReloadPerToken = 0.1;
// Position at which attention doubles the per-token recompute cost.
constexpr double kAttentionTokens = 2048;
// Ages are measured against this half-weight time (seconds).
constexpr double kRecencyScaleS = 60;

}  // namespace

// ---------------------------------------------------------------- bookkeeping

void KvCacheManager::Impl::RefreshEntry(uint32_t id) {
  IndexEntry& e = index_.at(id);
  uint8_t mask = 0;
  if (e.locks == 0) {
    if (e.device >= 0 && e.device_ready && device_pool_.refcount(e.device) == 0) mask |= 1u << kDeviceTier;
    if (e.host >= 0 && e.host_ready && host_pool_.refcount(e.host) == 0) mask |= 1u << kHostTier;
    if (e.on_disk && !e.disk_writing && e.disk_reads == 0) mask |= 1u << kDiskTier;
  }
  index_.Refresh(id, mask);
}

void KvCacheManager::Impl::MaybeErase(uint32_t id) {
  const IndexEntry& e = index_.at(id);
  if (!e.live || e.locks > 0) return;
  if (e.device >= 0 || e.host >= 0 || e.on_disk || e.disk_writing) return;
  index_.Erase(id);
}

void KvCacheManager::Impl::UnrefDevice(int32_t slot) {
  if (device_pool_.Unref(slot) > 0) return;
  const int32_t owner = device_owner_[size_t(slot)];
  if (owner < 0) {
    device_pool_.Release(slot);
  } else {
    RefreshEntry(uint32_t(owner));
  }
}

void KvCacheManager::Impl::UnrefHost(int32_t slot) {
  if (host_pool_.Unref(slot) > 0) return;
  const int32_t owner = host_owner_[size_t(slot)];
  if (owner < 0) {
    host_pool_.Release(slot);
  } else {
    RefreshEntry(uint32_t(owner));
  }
}

void KvCacheManager::Impl::DropCopy(uint32_t id, int tier) {
  IndexEntry& e = index_.at(id);
  if (tier == kDeviceTier) {
    const int32_t slot = e.device;
    PG_CHECK(slot >= 0);
    e.device = -1;
    e.device_ready = false;
    device_owner_[size_t(slot)] = -1;
    if (device_pool_.refcount(slot) == 0) device_pool_.Release(slot);
  } else if (tier == kHostTier) {
    const int32_t slot = e.host;
    PG_CHECK(slot >= 0);
    e.host = -1;
    e.host_ready = false;
    host_owner_[size_t(slot)] = -1;
    if (host_pool_.refcount(slot) == 0) host_pool_.Release(slot);
  } else {
    PG_CHECK(e.on_disk && !e.disk_writing);
    e.on_disk = false;
    --disk_used_blocks_;
  }
  RefreshEntry(id);
  MaybeErase(id);
}

// ---------------------------------------------------------------- eviction

int64_t KvCacheManager::Impl::DrainingDevice() const {
  if (moves_.empty()) return 0;
  std::unordered_map<int32_t, int32_t> pins;  // slot -> moves pinning it
  for (const auto& [tag, m] : moves_)
    if (m.device >= 0) pins[m.device]++;
  int64_t n = 0;
  for (const auto& [slot, k] : pins) {
    const int32_t owner = device_owner_[size_t(slot)];
    if (owner < 0 || device_pool_.refcount(slot) != k) continue;  // private, or a sequence uses it
    const IndexEntry& e = index_.at(uint32_t(owner));
    if (e.locks == 0 && e.device_ready) ++n;
  }
  return n;
}

uint32_t KvCacheManager::Impl::PickVictim(int tier, bool need_clean) const {
  const auto& set = index_.evictable(tier);
  const double now = cfg_.clock();
  using Key = std::tuple<int, int, double>;  // (retained, breaks a chain, value): smallest goes
  uint32_t best = PrefixIndex::kNone;
  Key best_key{};
  int seen = 0;
  for (auto it = set.begin(); it != set.end() && seen < kCandidates; ++it, ++seen) {
    const IndexEntry& e = index_.at(it->id);
    // A copy that must be written further down first is not "clean".
    bool dirty = false;
    if (tier == kDeviceTier) dirty = host_enabled() ? e.host < 0 : (disk_writable() && !e.on_disk);
    if (tier == kHostTier) dirty = disk_writable() && !e.on_disk;
    if (need_clean && dirty) continue;
    const int retained = Retained(e) ? 1 : 0;
    if (cfg_.eviction == EvictionPolicy::kLru) {
      // Oldest first; retained sessions only when nothing else is left.
      Key k{retained, 0, double(seen)};
      if (best == PrefixIndex::kNone || k < best_key) best = it->id, best_key = k;
      if (!retained) break;
      continue;
    }
    // Where would the block be reloaded from after this eviction?
    const double page = page_;
    const double recompute = page * (1.0 + (double(e.depth) * page + page / 2) / kAttentionTokens);
    const bool other_device = tier != kDeviceTier && e.device >= 0;
    const bool other_host = tier != kHostTier && (e.host >= 0 || (tier == kDeviceTier && host_enabled()));
    const bool other_disk = tier != kDiskTier && (e.on_disk || e.disk_writing || disk_writable());
    double after;
    if (other_device) after = 0;
    else if (other_host) after = kHostReloadPerToken * page;
    else if (other_disk) after = kDiskReloadPerToken * page;
    else after = recompute;
    const double before = tier == kDeviceTier ? 0 : tier == kHostTier ? kHostReloadPerToken * page : kDiskReloadPerToken * page;
    const double loss = std::max(after - before, 0.0) + 1e-3 * page;
    const double age = std::max(0.0, now - e.last_use_s);
    const double weight = (1.0 + std::log2(1.0 + e.uses)) / (1.0 + age / kRecencyScaleS);
    const bool lost = !(other_device || other_host || other_disk);
    const int breaks_chain = lost && index_.children_any(e.hash) > 0 ? 1 : 0;
    Key k{retained, breaks_chain, loss * weight};
    if (best == PrefixIndex::kNone || k < best_key) best = it->id, best_key = k;
  }
  return best;
}

bool KvCacheManager::Impl::EvictOne(int tier, bool may_wait) {
  const uint32_t v = PickVictim(tier, !may_wait);
  if (v == PrefixIndex::kNone) return false;
  IndexEntry& e = index_.at(v);
  if (tier == kDeviceTier) {
    uint64_t tag = 0;
    if (host_enabled() && e.host < 0) {
      const int32_t hs = AllocHostSlot(may_wait);
      if (hs >= 0) tag = StartWriteToHost(v, hs);
    } else if (!host_enabled() && disk_writable() && !e.on_disk && !e.disk_writing) {
      tag = StartWriteToDisk(v, false);
    }
    if (tag != 0) WaitFor(tag);
  } else if (tier == kHostTier) {
    if (disk_writable() && !e.on_disk && !e.disk_writing) {
      const uint64_t tag = StartWriteToDisk(v, true);
      if (tag != 0) WaitFor(tag);
    }
  } else {
    disk_->Remove(e.hash);
  }
  TierCounters& tc = tier == kDeviceTier ? c_.device : tier == kHostTier ? c_.host : c_.disk;
  tc.evictions++;
  DropCopy(v, tier);
  return true;
}

// Before taking n device slots: start the host copies of the victims that
// need one all at once, so the mover threads copy them in parallel instead
// of one synchronous copy per evicted block.
void KvCacheManager::Impl::PrepareDeviceRoom(int64_t n) {
  if (!host_enabled()) return;
  for (int64_t k = device_pool_.n_free(); k < n; ++k) {
    const uint32_t v = PickVictim(kDeviceTier, false);
    if (v == PrefixIndex::kNone || index_.at(v).host >= 0) return;
    const int32_t hs = AllocHostSlot(false);
    if (hs < 0) return;
    StartWriteToHost(v, hs);  // pins the slot: the next PickVictim sees another block
  }
}

int32_t KvCacheManager::Impl::AllocDeviceSlot() {
  for (;;) {
    const int32_t s = device_pool_.Allocate();
    if (s >= 0) return s;
    if (EvictOne(kDeviceTier, true)) continue;
    if (!WaitForAnyMove()) return -1;  // a demotion in flight may free a slot
  }
}

int32_t KvCacheManager::Impl::AllocHostSlot(bool may_wait) {
  if (!host_enabled()) return -1;
  for (;;) {
    const int32_t s = host_pool_.Allocate();
    if (s >= 0) return s;
    if (EvictOne(kHostTier, may_wait)) continue;
    if (!may_wait || !WaitForAnyMove()) return -1;  // copies in flight pin host slots
  }
}

bool KvCacheManager::Impl::MakeDiskRoom() {
  while (disk_used_blocks_ >= disk_capacity_blocks_) {
    if (EvictOne(kDiskTier, true)) continue;
    if (!WaitForAnyMove()) return false;  // writes in flight count as used
  }
  return true;
}

bool KvCacheManager::Impl::WaitForAnyMove() {
  if (moves_.empty()) return false;
  const bool was = in_wait_;
  in_wait_ = true;
  ProcessCompletions(true);
  in_wait_ = was;
  return true;
}

// ---------------------------------------------------------------- moves

uint64_t KvCacheManager::Impl::Submit(const Move& m) {
  const uint64_t tag = next_tag_++;
  moves_.emplace(tag, m);
  const IndexEntry& e = index_.at(m.entry);
  const size_t bytes = layout_.block_bytes();
  switch (m.kind) {
    case MoveKind::kDeviceToHost: {
      uint8_t* src = device_arena_->BlockPtr(m.device);
      uint8_t* dst = host_arena_->BlockPtr(m.host);
      mover_->Submit(tag, [src, dst, bytes] {
        std::memcpy(dst, src, bytes);
        return Status::Ok();
      });
      break;
    }
    case MoveKind::kHostToDevice: {
      const uint8_t* src = host_arena_->BlockPtr(m.host);
      BlockArena* dev = device_arena_.get();
      const int32_t slot = m.device;
      mover_->Submit(tag, [dev, slot, src] {
        dev->CopyIn(slot, src);
        return Status::Ok();
      });
      break;
    }
    case MoveKind::kDiskToDevice: {
      uint8_t* dst = device_arena_->BlockPtr(m.device);
      DiskTier* disk = disk_.get();
      mover_->Submit(tag, [disk, dst, hash = e.hash, tokens = e.tokens] {
        Status st = disk->Read(hash, tokens, dst);
        if (st.code() == StatusCode::kCorrupt) disk->Remove(hash);
        return st;
      });
      break;
    }
    case MoveKind::kHostToDisk:
    case MoveKind::kDeviceToDisk: {
      const uint8_t* src = m.kind == MoveKind::kHostToDisk ? host_arena_->BlockPtr(m.host) : device_arena_->BlockPtr(m.device);
      DiskTier::BlockInfo info{e.hash, e.parent, e.depth, e.tokens};
      DiskTier* disk = disk_.get();
      mover_->Submit(tag, [disk, src, info = std::move(info)] { return disk->Write(info, src); });
      break;
    }
  }
  return tag;
}

uint64_t KvCacheManager::Impl::StartWriteToHost(uint32_t id, int32_t host_slot) {
  IndexEntry& e = index_.at(id);
  PG_CHECK(e.device >= 0 && e.device_ready && e.host < 0);
  e.host = host_slot;  // refcount 1 from Allocate = the move's pin
  e.host_ready = false;
  host_owner_[size_t(host_slot)] = int32_t(id);
  device_pool_.Ref(e.device);
  RefreshEntry(id);
  return Submit(Move{MoveKind::kDeviceToHost, id, e.device, host_slot});
}

uint64_t KvCacheManager::Impl::StartWriteToDisk(uint32_t id, bool from_host) {
  if (!disk_writable() || !MakeDiskRoom()) return 0;
  IndexEntry& e = index_.at(id);
  PG_CHECK(!e.on_disk && !e.disk_writing);
  Move m{from_host ? MoveKind::kHostToDisk : MoveKind::kDeviceToDisk, id, -1, -1};
  if (from_host) {
    PG_CHECK(e.host >= 0 && e.host_ready);
    m.host = e.host;
    host_pool_.Ref(e.host);
  } else {
    PG_CHECK(e.device >= 0 && e.device_ready);
    m.device = e.device;
    device_pool_.Ref(e.device);
  }
  e.disk_writing = true;
  ++disk_used_blocks_;
  RefreshEntry(id);
  return Submit(m);
}

void KvCacheManager::Impl::StartLoad(uint32_t id, int32_t device_slot) {
  IndexEntry& e = index_.at(id);
  PG_CHECK(e.device < 0);
  e.device = device_slot;
  e.device_ready = false;
  device_owner_[size_t(device_slot)] = int32_t(id);
  device_pool_.Ref(device_slot);  // the move's pin (the sequence holds the other reference)
  Move m{MoveKind::kDiskToDevice, id, device_slot, -1};
  if (e.host >= 0 && e.host_ready) {
    m.kind = MoveKind::kHostToDevice;
    m.host = e.host;
    host_pool_.Ref(e.host);
  } else {
    PG_CHECK(e.on_disk);
    e.disk_reads++;
  }
  RefreshEntry(id);
  Submit(m);
}

void KvCacheManager::Impl::Finish(const Move& m, const Status& st) {
  IndexEntry& e = index_.at(m.entry);
  const int64_t bytes = int64_t(layout_.block_bytes());
  switch (m.kind) {
    case MoveKind::kDeviceToHost:
      e.host_ready = true;
      c_.device.bytes_out += bytes;
      c_.device.demotions++;
      c_.host.bytes_in += bytes;
      UnrefDevice(m.device);
      UnrefHost(m.host);
      if (cfg_.write_policy == WritePolicy::kWriteThrough && disk_writable() && !e.on_disk && !e.disk_writing) {
        StartWriteToDisk(m.entry, true);
      }
      break;
    case MoveKind::kHostToDevice:
      e.device_ready = true;
      c_.host.bytes_out += bytes;
      c_.host.promotions++;
      c_.device.bytes_in += bytes;
      UnrefHost(m.host);
      UnrefDevice(m.device);
      break;
    case MoveKind::kDiskToDevice:
      e.disk_reads--;
      if (st.ok()) {
        e.device_ready = true;
        c_.disk.bytes_out += bytes;
        c_.disk.promotions++;
        c_.device.bytes_in += bytes;
      } else {
        PG_LOG_WARN("kv disk tier: block load failed, recomputing: {}", st.ToString());
        c_.disk.errors++;
        if (st.code() == StatusCode::kIoError) disk_->Remove(e.hash);
        PG_CHECK(e.on_disk);
        e.on_disk = false;
        --disk_used_blocks_;
        e.device = -1;  // the slot becomes the sequence's private block
        e.device_ready = false;
        device_owner_[size_t(m.device)] = -1;
      }
      UnrefDevice(m.device);
      break;
    case MoveKind::kHostToDisk:
    case MoveKind::kDeviceToDisk:
      e.disk_writing = false;
      if (st.ok()) {
        e.on_disk = true;
        c_.disk.bytes_in += int64_t(disk_->file_bytes());
        (m.kind == MoveKind::kHostToDisk ? c_.host : c_.device).demotions++;
        (m.kind == MoveKind::kHostToDisk ? c_.host : c_.device).bytes_out += bytes;
      } else {
        --disk_used_blocks_;
        DisableDiskWrites(st);
      }
      if (m.kind == MoveKind::kHostToDisk) UnrefHost(m.host); else UnrefDevice(m.device);
      break;
  }
  RefreshEntry(m.entry);
  MaybeErase(m.entry);
}

void KvCacheManager::Impl::ProcessCompletions(bool wait_for_one) {
  if (mover_->in_flight() > 0) {
    std::vector<BlockMover::Done> done;
    mover_->Collect(&done, wait_for_one);
    for (auto& d : done) {
      auto it = moves_.find(d.tag);
      PG_CHECK(it != moves_.end());
      const Move m = it->second;
      moves_.erase(it);
      Finish(m, d.status);
    }
  }
  if (!in_wait_) SettleAll();
}

void KvCacheManager::Impl::SettleAll() {
  if (unsettled_.empty()) return;
  std::vector<SeqId> ids(unsettled_.begin(), unsettled_.end());
  for (SeqId id : ids) Settle(id, seqs_.at(id));
}

void KvCacheManager::Impl::WaitFor(uint64_t tag) {
  const bool was = in_wait_;
  in_wait_ = true;
  while (moves_.count(tag)) ProcessCompletions(true);
  in_wait_ = was;
}

void KvCacheManager::Impl::WaitAll() {
  const bool was = in_wait_;
  in_wait_ = true;
  while (!moves_.empty()) ProcessCompletions(true);
  in_wait_ = was;
}

void KvCacheManager::Impl::DisableDiskWrites(const Status& why) {
  if (!disk_writes_ok_) return;
  disk_writes_ok_ = false;
  c_.disk_writes_disabled = true;
  PG_LOG_WARN("kv disk tier: writes stopped ({}); serving continues without new disk blocks", why.ToString());
}

// Write-back keeps a few clean blocks ready: when free slots run low, the
// oldest device blocks are copied to host (and host blocks to disk) ahead of
// their eviction, so evictions rarely wait for a copy.
void KvCacheManager::Impl::CleanInBackground() {
  if (host_enabled() && device_pool_.n_free() < std::max<int64_t>(1, device_pool_.capacity() / 8)) {
    int started = 0;
    std::vector<uint32_t> todo;
    for (auto it = index_.evictable(kDeviceTier).begin(); it != index_.evictable(kDeviceTier).end() && todo.size() < 8; ++it) {
      if (index_.at(it->id).host < 0) todo.push_back(it->id);
    }
    for (uint32_t id : todo) {
      const int32_t hs = AllocHostSlot(false);
      if (hs < 0) break;
      StartWriteToHost(id, hs);
      ++started;
    }
  }
  if (host_enabled() && disk_writable() && host_pool_.n_free() < std::max<int64_t>(1, host_pool_.capacity() / 8)) {
    std::vector<uint32_t> todo;
    for (auto it = index_.evictable(kHostTier).begin(); it != index_.evictable(kHostTier).end() && todo.size() < 8; ++it) {
      const IndexEntry& e = index_.at(it->id);
      if (!e.on_disk && !e.disk_writing) todo.push_back(it->id);
    }
    for (uint32_t id : todo)
      if (StartWriteToDisk(id, true) == 0) break;
  }
}

Status KvCacheManager::Impl::Flush() {
  WaitAll();
  if (!disk_enabled()) return Status::Ok();
  for (uint32_t id = 0; id < index_.id_limit() && disk_writable(); ++id) {
    const IndexEntry& e = index_.at(id);
    if (!e.live || e.on_disk || e.disk_writing) continue;
    uint64_t tag = 0;
    if (e.host >= 0 && e.host_ready) tag = StartWriteToDisk(id, true);
    else if (e.device >= 0 && e.device_ready) tag = StartWriteToDisk(id, false);
    else continue;
    if (tag == 0) break;
  }
  WaitAll();
  if (!disk_writes_ok_) return IoError("kv disk tier: writes are stopped; flush incomplete");
  return Status::Ok();
}

}  // namespace pg
