// TierStore: the places blocks live and the index that finds them. It holds
// the prefix index, one BlockMedium per tier (SlotTier for device and host,
// DiskTier with its block budget, RemoteTier), and the counters; and it keeps
// their shared bookkeeping consistent (eviction sets, owners, dropping
// copies). It decides nothing: EvictionPolicy picks victims, TierAllocator
// makes room, TierMover runs the copies, KvCacheManager owns the sequences.
//
// Entry bookkeeping rule: after changing an entry's copies, locks or last
// use, call RefreshEntry (eviction sets and child counts), then MaybeErase
// when a copy or lock went away.
//
// Thread-safety: none; the scheduler thread owns it.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <span>

#include "base/check.h"
#include "base/status.h"
#include "kv/accounting/cache_counters.h"
#include "kv/accounting/miss_accounting.h"
#include "kv/accounting/session_usage.h"
#include "kv/index/prefix_index.h"
#include "kv/kv_cache_config.h"
#include "kv/media/disk_tier.h"
#include "kv/media/remote_tier.h"
#include "kv/media/slot_tier.h"
#include "kv/media/staging_pool.h"
#include "kv/policy/eviction_policy.h"
#include "kv/tier_table.h"

namespace pg {

class TierStore {
 public:
  // Checks a config's sizes and options; the messages name the flags.
  static Status Validate(const KvCacheConfig& cfg);
  // Creates the slot tiers and, with a disk dir and the prefix cache on,
  // opens the disk tier and indexes the blocks found there; with a remote
  // URL and the prefix cache on, the remote tier. The disk may be over its
  // cap afterwards (TierAllocator::TrimDisk).
  Status Open(const KvCacheConfig& cfg);

  const KvLayout& layout() const { return layout_; }
  size_t block_bytes() const { return layout_.block_bytes(); }
  PrefixIndex& index() { return index_; }
  const PrefixIndex& index() const { return index_; }
  // The slot tier `tier` (kDeviceTier or kHostTier).
  SlotTier& slots(int tier) { return slot_tiers_.at(size_t(tier)); }
  const SlotTier& slots(int tier) const { return slot_tiers_.at(size_t(tier)); }
  SlotTier& device() { return slots(kDeviceTier); }
  const SlotTier& device() const { return slots(kDeviceTier); }
  // Host buffers for copies whose media lend none (one per mover thread).
  StagingPool& staging() { return *staging_; }
  SlotTier& host() { return slots(kHostTier); }
  const SlotTier& host() const { return slots(kHostTier); }
  DiskTier* disk() { return disk_.get(); }        // null without a disk tier
  RemoteTier* remote() { return remote_.get(); }  // null without a remote tier
  const RemoteTier* remote() const { return remote_.get(); }
  // The medium of `tier` (which must be enabled).
  BlockMedium& medium(int tier) {
    PG_CHECK(media_[size_t(tier)] != nullptr);
    return *media_[size_t(tier)];
  }
  // Adds index entry (hash, parent, depth, tokens), with no copy yet, and
  // tells the miss accounting it was published.
  uint32_t Publish(const BlockHash& hash, const BlockHash& parent, int32_t depth, std::span<const int32_t> tokens);
  CacheCounters& counters() { return c_; }
  // Blocks per session and slot tier (quotas, fair share); kept by RefreshEntry.
  const SessionUsage& usage() const { return usage_; }
  MissAccounting& accounting() { return accounting_; }

  // The tier table (tier_table.h), set by Open from the tiers the config
  // enables. below: the tier an evicted copy of `tier` is copied down to
  // (host, else disk, for the device; disk for the host), kNoTier when it is
  // simply dropped. writable: copies may be written into local tier `tier`
  // now (a slot tier that has slots; the disk while its writes are on).
  const TierTable& tiers() const { return table_; }
  int below(int tier) const { return table_.below[size_t(tier)]; }
  bool writable(int tier) const { return table_.writable[size_t(tier)]; }

  bool host_enabled() const { return host().enabled(); }
  bool disk_enabled() const { return disk_ != nullptr; }
  bool disk_writable() const { return disk_ != nullptr && disk_writes_ok_; }
  bool disk_full() const { return disk_used_ >= disk_capacity_; }
  bool disk_over_cap() const { return disk_used_ > disk_capacity_; }
  int64_t disk_used() const { return disk_used_; }
  int64_t disk_capacity() const { return disk_capacity_; }  // block files
  // A file was started (+1) or dropped / failed (-1); writes in flight count.
  void CountDiskFile(int delta) { disk_used_ += delta; }
  // Stops disk writes for good (full disk, read-only dir): one warning.
  void DisableDiskWrites(const Status& why);

  EvictionContext eviction_context(const SessionRetention& retention) const {
    return EvictionContext{index_, retention, layout_.page_tokens, table_, &usage_};
  }

  // Recomputes which tiers may evict entry `id` now and updates the index.
  void RefreshEntry(uint32_t id);
  // Erases an entry that has no copy, no write in flight and no lock.
  void MaybeErase(uint32_t id);
  // Drops one reference to `slot` of a slot tier; refreshes its owner when
  // the slot just became cached.
  void Unref(int tier, int32_t slot);
  // Removes entry id's copy in `tier` (freeing its slot, or its disk budget;
  // the caller deletes the file), then refreshes / erases the entry.
  void DropCopy(uint32_t id, int tier);

  // The pins of a copy (TierMover::Start / Collect), as medium(tier).pinning()
  // says. PinSource pins entry id's usable copy in `tier` for a read and
  // returns its slot (-1 when the medium has none); UnpinSource drops that
  // pin once the copy ended with `st`, and is false when the source failed
  // (a failed file read drops the file). ClaimTarget makes id's copy in
  // `tier` exist, not ready (a slot: `slot`, owned by id, one reference);
  // ReleaseTarget makes it ready (ok) or gives it up, and drops the pin.
  int32_t PinSource(uint32_t id, int tier);
  bool UnpinSource(uint32_t id, int tier, int32_t slot, const Status& st);
  void ClaimTarget(uint32_t id, int tier, int32_t slot, Tier from);
  void ReleaseTarget(uint32_t id, int tier, int32_t slot, bool ok, const Status& st);

  // Slot refcounts equal the holders given (sequences + moves), owners and
  // entries agree, the disk count matches the entries and the cap, entry
  // locks total `expected_locks`, every entry chains from its parent.
  Status CheckIntegrity(std::span<const int32_t> device_holders, std::span<const int32_t> host_holders,
                        int64_t expected_locks) const;
  // Counters plus occupancy now.
  CacheCounters Snapshot() const;

 private:
  Status OpenDisk(const KvCacheConfig& cfg);

  KvLayout layout_;
  BlockHashKey hash_key_;  // KvCacheConfig::hash_key: CheckIntegrity re-chains every entry
  PrefixIndex index_;
  std::array<SlotTier, kSlotTiers> slot_tiers_;  // indexed by Tier: device, host
  std::array<BlockMedium*, kNumTiers> media_{};  // indexed by Tier; null = no such tier
  TierTable table_;                              // below(), writable()
  std::unique_ptr<StagingPool> staging_;         // cfg.mover_threads() buffers from cfg.host_memory
  std::unique_ptr<DiskTier> disk_;
  std::unique_ptr<RemoteTier> remote_;  // null without --kv-remote
  int64_t disk_capacity_ = 0;           // block files
  int64_t disk_used_ = 0;               // entries with a file or a file write in flight
  bool disk_writes_ok_ = true;
  CacheCounters c_;
  SessionUsage usage_;
  MissAccounting accounting_;  // miss reasons, ghosts, what-if totals
};

}  // namespace pg
