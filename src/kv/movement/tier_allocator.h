// TierAllocator: hands out device slots, host slots and disk room, evicting
// down the tiers when a tier is full. An evicted block is first copied to
// the tier below its own in the store's tier table (TierStore::below: host,
// else disk, for the device; disk for the host) unless it is there already;
// the lowest tier simply drops it. The policy picks
// the victims; the mover runs the copies; waits for copies happen here,
// because finishing one copy may start the next (write-through: host -> disk).
//
// Thread-safety: none; the scheduler thread owns it.
#pragma once

#include <cstdint>
#include <vector>

#include "kv/kv_cache_config.h"
#include "kv/media/tier_store.h"
#include "kv/movement/tier_mover.h"
#include "kv/policy/eviction_policy.h"
#include "kv/policy/session_retention.h"

namespace pg {

class TierAllocator {
 public:
  TierAllocator(TierStore& store, TierMover& mover, const EvictionPolicy& policy, const SessionRetention& retention,
                WritePolicy write_policy);

  // Cached device blocks evictable now / held only by in-flight copies
  // (evictable once those land).
  int64_t EvictableDevice() const;
  int64_t DrainingDevice() const;
  // True when n device slots are free or can be had by evicting.
  bool CanAllocateDevice(int64_t n) const;
  // Before taking n device slots: starts the host copies of the victims that
  // need one all at once, so the mover threads copy them in parallel.
  void PrepareDeviceRoom(int64_t n);
  // A device slot (refcount 1, no owner), evicting and waiting as needed
  // (while PrepareDeviceRoom's copies are in flight, for them to land rather
  // than copying more victims); -1 when none can be had.
  int32_t AllocDeviceSlot();
  // A host slot; -1 without a host tier, or when none is free without waiting
  // (may_wait false) / at all.
  int32_t AllocHostSlot(bool may_wait);
  // Starts a disk write of entry id's copy in slot tier `from` after making
  // room; 0 when the disk is not writable or no room can be made.
  uint64_t StartWriteToDisk(uint32_t id, int from);
  // Copies entry id's ready device copy into host slot `host_slot` (freshly
  // allocated; the move keeps it). Returns the move's tag.
  uint64_t StartCopyToHost(uint32_t id, int32_t host_slot);
  // Loads entry id (from host when it has a ready host copy, else from its
  // file) into `device_slot`, which the caller allocated and keeps holding.
  uint64_t StartLoad(uint32_t id, int32_t device_slot);
  // Copies entry id's copy in `tier` to the tier below (TierStore::below)
  // when it has none there yet and room can be had (a slot: waiting when
  // may_wait). Returns the move's tag, 0 when no copy started.
  uint64_t CopyDown(uint32_t id, int tier, bool may_wait);
  // Frees one slot (or block file) of `tier`; false when nothing can go.
  bool EvictOne(int tier, bool may_wait);
  // Evicts block files until the disk is within its cap (after a scan).
  void TrimDisk();

  // Write-through: copies a freshly committed device block down at once.
  void WriteThrough(uint32_t id);
  // Write-back: when free slots run low, starts copying the oldest device
  // (and host) blocks down ahead of their eviction. Once per engine step.
  void CleanInBackground();

  // Finishes done copies (wait: at least one, when some are in flight).
  void Collect(bool wait);
  bool WaitForAnyMove();  // false when nothing is in flight
  void WaitFor(uint64_t tag);
  void WaitAll();
  // Waits for every copy, then writes every cached block not on disk yet.
  Status Flush();

 private:
  bool MakeDiskRoom();
  bool MakingRoom();  // some of PrepareDeviceRoom's copies are still in flight
  uint32_t PickVictim(int tier, bool need_clean) const;

  TierStore& store_;
  TierMover& mover_;
  const EvictionPolicy& policy_;
  const SessionRetention& retention_;
  WritePolicy write_policy_;
  std::vector<uint64_t> room_moves_;  // PrepareDeviceRoom's copies (tags), until they land
};

}  // namespace pg
