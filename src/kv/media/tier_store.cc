#include "kv/media/tier_store.h"

#include <fmt/format.h>

#include "base/check.h"
#include "base/log.h"
#include "base/units.h"

namespace pg {

Status TierStore::Validate(const KvCacheConfig& cfg) {
  PG_RETURN_IF_ERROR(cfg.layout.Validate());
  const uint64_t bb = cfg.layout.block_bytes();
  const uint64_t n_dev = cfg.device_bytes / bb;
  if (n_dev < 1) {
    return InvalidArgument(fmt::format("--kv-device-mem {} holds no block of {} ({})", FormatBytes(cfg.device_bytes),
                                       FormatBytes(bb), cfg.layout.ToString()));
  }
  if (n_dev >= (uint64_t(1) << 31)) return InvalidArgument("--kv-device-mem: too many blocks");
  const uint64_t n_host = cfg.host_bytes / bb;
  if (cfg.host_bytes > 0 && n_host < 1) {
    return InvalidArgument(
        fmt::format("--kv-host-mem {} holds no block of {}", FormatBytes(cfg.host_bytes), FormatBytes(bb)));
  }
  if (n_host >= (uint64_t(1) << 31)) return InvalidArgument("--kv-host-mem: too many blocks");
  if (cfg.io_threads < 1 || cfg.io_threads > 64) return InvalidArgument("kv io threads must be in [1, 64]");
  if (cfg.debug_load_delay_s < 0 || cfg.debug_load_delay_s > 60) {
    return InvalidArgument("--kv-debug-load-delay must be in [0, 60] seconds");
  }
  if (cfg.min_promote_tokens < 0) return InvalidArgument("kv min promote tokens must be >= 0");
  if (!cfg.disk_dir.empty() && cfg.disk_bytes == 0) return InvalidArgument("--kv-disk-dir needs --kv-disk-size > 0");
  return Status::Ok();
}

Status TierStore::Open(const KvCacheConfig& cfg) {
  PG_RETURN_IF_ERROR(Validate(cfg));
  layout_ = cfg.layout;
  hash_key_ = cfg.hash_key;
  const size_t bb = block_bytes();
  PG_ASSIGN_OR_RETURN(device(), SlotTier::Create(kDeviceTier, int64_t(cfg.device_bytes / bb), bb, cfg.device_arena));
  PG_ASSIGN_OR_RETURN(host(), SlotTier::Create(kHostTier, int64_t(cfg.host_bytes / bb), bb, {}, cfg.host_memory));
  PG_ASSIGN_OR_RETURN(staging_, StagingPool::Create(cfg.mover_threads(), bb, cfg.host_memory));
  for (int t = 0; t < kSlotTiers; ++t) {
    usage_.SetCapacity(t, slots(t).capacity());
    media_[size_t(t)] = &slots(t);
  }
  if (!cfg.disk_dir.empty() && cfg.prefix_cache) PG_RETURN_IF_ERROR(OpenDisk(cfg));
  if (!cfg.remote.url.empty() && cfg.prefix_cache) {
    PG_ASSIGN_OR_RETURN(remote_, RemoteTier::Create(cfg.remote, cfg.layout, cfg.model_identity));
    media_[kRemoteTier] = remote_.get();
  }
  table_ = TierTable::Of({device().enabled(), host().enabled(), disk_enabled()});
  accounting_.Configure({.block_bytes = bb,
                         .page_tokens = layout_.page_tokens,
                         .tiers = table_,
                         .disk_file_bytes = disk_ ? uint64_t(disk_->file_bytes()) : 0,
                         .ghost_blocks = cfg.ghost_blocks,
                         .clock = cfg.clock,
                         .hash_key = cfg.hash_key});
  return Status::Ok();
}

Status TierStore::OpenDisk(const KvCacheConfig& cfg) {
  PG_ASSIGN_OR_RETURN(disk_, DiskTier::Open(cfg.disk_dir, layout_, cfg.model_identity));
  media_[kDiskTier] = disk_.get();
  disk_capacity_ = int64_t(cfg.disk_bytes / disk_->file_bytes());
  if (disk_capacity_ < 1) {
    return InvalidArgument(fmt::format("--kv-disk-size {} holds no block file of {}", FormatBytes(cfg.disk_bytes),
                                       FormatBytes(disk_->file_bytes())));
  }
  PG_ASSIGN_OR_RETURN(auto scan, disk_->Scan(cfg.hash_key));
  c_.tiers[kDiskTier].errors += scan.removed_bad;
  for (auto& b : scan.blocks) {
    if (index_.Find(b.hash) != PrefixIndex::kNone) continue;
    const uint32_t id = Publish(b.hash, b.parent, b.depth, b.tokens);
    IndexEntry& e = index_.at(id);
    e.copy(kDiskTier) = TierCopy{TierCopy::kFile, true};
    e.last_tick = 0;
    ++disk_used_;
    RefreshEntry(id);
  }
  if (!scan.blocks.empty() || scan.removed_bad > 0) {
    PG_LOG_INFO("kv disk tier {}: {} blocks indexed, {} damaged files removed, {} foreign files", cfg.disk_dir,
                disk_used_, scan.removed_bad, scan.foreign);
  }
  return Status::Ok();
}

uint32_t TierStore::Publish(const BlockHash& hash, const BlockHash& parent, int32_t depth,
                            std::span<const int32_t> tokens) {
  const uint32_t id = index_.Insert(hash, parent, depth, tokens);
  accounting_.NotePublished(hash, parent);
  return id;
}

void TierStore::DisableDiskWrites(const Status& why) {
  if (!disk_writes_ok_) return;
  disk_writes_ok_ = false;
  table_.writable[kDiskTier] = false;
  c_.disk_writes_disabled = true;
  PG_LOG_WARN("kv disk tier: writes stopped ({}); serving continues without new disk blocks", why.ToString());
}

void TierStore::RefreshEntry(uint32_t id) {
  IndexEntry& e = index_.at(id);
  uint8_t mask = 0;
  if (e.locks == 0) {
    for (int t = 0; t < kLocalTiers; ++t) {
      const TierCopy& c = e.copy(t);
      const int32_t pins = t < kSlotTiers && c.held() ? slots(t).refcount(c.slot) : c.reads;
      if (c.usable() && pins == 0) mask |= uint8_t(1u << t);
    }
  }
  index_.Refresh(id, mask);
  usage_.Update(id, e);
}

void TierStore::MaybeErase(uint32_t id) {
  const IndexEntry& e = index_.at(id);
  if (!e.live || e.locks > 0) return;
  if (e.in_any_tier()) return;
  index_.Erase(id);
}

void TierStore::Unref(int tier, int32_t slot) {
  const int32_t owner = slots(tier).Unref(slot);
  if (owner != SlotTier::kNoOwner) RefreshEntry(uint32_t(owner));
}

void TierStore::DropCopy(uint32_t id, int tier) {
  TierCopy& c = index_.at(id).copy(tier);
  if (tier == kDiskTier) {
    PG_CHECK(c.usable());
    c.Clear();
    --disk_used_;
  } else {
    PG_CHECK(c.slot >= 0);
    const int32_t slot = c.slot;
    c = TierCopy{};
    slots(tier).Disown(slot);
  }
  RefreshEntry(id);
  MaybeErase(id);
}

int32_t TierStore::PinSource(uint32_t id, int tier) {
  const Pinning pinning = medium(tier).pinning();
  if (pinning == Pinning::kStaged) return -1;
  TierCopy& c = index_.at(id).copy(tier);
  PG_CHECK(c.usable());
  if (pinning == Pinning::kFile) {
    c.reads++;
    return -1;
  }
  slots(tier).Ref(c.slot);
  return c.slot;
}

bool TierStore::UnpinSource(uint32_t id, int tier, int32_t slot, const Status& st) {
  switch (medium(tier).pinning()) {
    case Pinning::kSlot: Unref(tier, slot); return true;
    case Pinning::kStaged: return st.ok();
    case Pinning::kFile: break;
  }
  IndexEntry& e = index_.at(id);
  TierCopy& c = e.copy(tier);
  c.reads--;
  if (st.ok()) return true;
  PG_LOG_WARN("kv disk tier: block load failed, recomputing: {}", st.ToString());
  c_.tiers[size_t(tier)].errors++;
  if (st.code() == StatusCode::kIoError) disk_->Remove(e.hash);
  PG_CHECK(c.usable());
  c.Clear();
  CountDiskFile(-1);
  return false;
}

void TierStore::ClaimTarget(uint32_t id, int tier, int32_t slot, Tier from) {
  TierCopy& c = index_.at(id).copy(tier);
  switch (medium(tier).pinning()) {
    case Pinning::kSlot:
      PG_CHECK(slot >= 0 && !c.held());
      c = TierCopy{slot, false, from};
      slots(tier).SetOwner(slot, id);
      slots(tier).Ref(slot);
      break;
    case Pinning::kFile:
      PG_CHECK(disk_writable() && !disk_full());
      PG_CHECK(!c.held());
      c = TierCopy{TierCopy::kFile, false};
      CountDiskFile(+1);
      break;
    case Pinning::kStaged: break;
  }
}

void TierStore::ReleaseTarget(uint32_t id, int tier, int32_t slot, bool ok, const Status& st) {
  const Pinning pinning = medium(tier).pinning();
  if (pinning == Pinning::kStaged) return;
  TierCopy& c = index_.at(id).copy(tier);
  if (ok) {
    c.ready = true;
  } else if (pinning == Pinning::kSlot) {
    c = TierCopy{};  // a device slot becomes its sequence's private block
    slots(tier).Disown(slot);
  } else {
    c.Clear();
    CountDiskFile(-1);
    DisableDiskWrites(st);
  }
  if (pinning == Pinning::kSlot) Unref(tier, slot);
}

Status TierStore::CheckIntegrity(std::span<const int32_t> device_holders, std::span<const int32_t> host_holders,
                                 int64_t expected_locks) const {
  PG_RETURN_IF_ERROR(index_.CheckIntegrity());
  PG_RETURN_IF_ERROR(device().CheckIntegrity(device_holders, index_));
  PG_RETURN_IF_ERROR(host().CheckIntegrity(host_holders, index_));
  PG_RETURN_IF_ERROR(usage_.CheckIntegrity(index_));
  int64_t files = 0, locks = 0;
  for (uint32_t id = 0; id < index_.id_limit(); ++id) {
    const IndexEntry& e = index_.at(id);
    if (!e.live) continue;
    locks += e.locks;
    const TierCopy& file = e.copy(kDiskTier);
    if (file.reads < 0 || (file.reads > 0 && !file.usable())) {
      return Internal(fmt::format("entry {}: disk reads without a file", id));
    }
    files += e.in_tier(kDiskTier) ? 1 : 0;
    for (int t = 0; t < kSlotTiers; ++t) {
      const int32_t slot = e.copy(t).slot;
      if (slot >= 0 && slots(t).owner(slot) != int32_t(id)) {
        return Internal(fmt::format("entry {}: {} slot not owned", id, TierName(t)));
      }
    }
    if (!e.in_any_tier() && e.locks == 0) {
      return Internal(fmt::format("entry {}: no copy anywhere but still indexed", id));
    }
    if (!(ChainHash(e.parent, e.tokens, hash_key_) == e.hash))
      return Internal(fmt::format("entry {}: hash does not chain from its parent", id));
    if (int64_t(e.tokens.size()) != layout_.page_tokens)
      return Internal(fmt::format("entry {}: {} tokens", id, e.tokens.size()));
  }
  if (files != disk_used_) return Internal(fmt::format("disk tier: {} blocks counted, {} indexed", disk_used_, files));
  if (disk_enabled() && disk_over_cap()) return Internal("disk tier: over capacity");
  if (locks != expected_locks) return Internal(fmt::format("entry locks {} != expected {}", locks, expected_locks));
  return Status::Ok();
}

CacheCounters TierStore::Snapshot() const {
  CacheCounters c = c_;
  for (int t = 0; t < kSlotTiers; ++t) slots(t).FillOccupancy(block_bytes(), &c.tiers[size_t(t)]);
  if (disk_) {
    const int64_t fb = int64_t(disk_->file_bytes());
    TierCounters& d = c.tiers[kDiskTier];
    d.capacity_blocks = disk_capacity_;
    d.used_blocks = disk_used_;
    d.cached_blocks = disk_used_;
    d.used_bytes = disk_used_ * fb;
    d.capacity_bytes = disk_capacity_ * fb;
  }
  c.index_entries = int64_t(index_.size());
  c.disk_writes_disabled = !disk_writes_ok_;
  accounting_.Fill(&c);
  return c;
}

}  // namespace pg
