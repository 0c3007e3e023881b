// TierMover: the block copies in flight between tiers: demotions (device ->
// host, host or device -> disk) and promotions (host or disk -> device).
//
// Start* records the copy in the index (the target copy exists but is not
// ready, a file write or read is counted), pins the slots it reads and
// writes (one reference each), and queues the bytes on the BlockMover
// threads. Collect() takes finished copies back on the scheduler thread:
// the target copy becomes ready (or, for a failed disk read, is given up),
// the pins are dropped and the counters updated. A failed disk write stops
// disk writes (TierStore::DisableDiskWrites). Room is made before a Start*
// (TierAllocator), never here.
//
// Thread-safety: scheduler thread only, except the copy jobs themselves,
// which touch only the pinned slots' bytes and the disk tier's files.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "base/function_ref.h"
#include "kv/media/tier_store.h"
#include "kv/movement/block_mover.h"

namespace pg {

class TierMover {
 public:
  enum class Kind { kDeviceToHost, kHostToDevice, kDiskToDevice, kHostToDisk, kDeviceToDisk };
  struct Move {
    Kind kind;
    uint32_t entry;
    int32_t device = -1;  // pinned device slot, -1 = none
    int32_t host = -1;    // pinned host slot, -1 = none
  };

  TierMover(TierStore& store, int io_threads);
  // Fault injection: each promotion job sleeps this long first (slow tier).
  void set_load_delay(double seconds) { load_delay_s_ = seconds; }

  // Copies entry id's ready device copy into host slot `host_slot` (freshly
  // allocated; its reference becomes the move's pin). Returns the move's tag.
  uint64_t StartWriteToHost(uint32_t id, int32_t host_slot);
  // Writes entry id's ready host (from_host) or device copy to a file. The
  // disk must have room and be writable. Returns the tag.
  uint64_t StartWriteToDisk(uint32_t id, bool from_host);
  // Loads entry id (from host when it has a ready host copy, else from its
  // file) into `device_slot`, which the caller allocated and holds.
  uint64_t StartLoad(uint32_t id, int32_t device_slot);

  // Finishes the copies that are done (with wait: at least one, blocking,
  // when some are in flight); `then` runs after each one is finished.
  void Collect(bool wait, FunctionRef<void(const Move&)> then);
  bool empty() const { return moves_.empty(); }
  bool in_flight(uint64_t tag) const { return moves_.count(tag) != 0; }
  const std::unordered_map<uint64_t, Move>& moves() const { return moves_; }
  // Adds the slots each move pins to per-slot holder counts.
  void CountPins(std::span<int32_t> device_holders, std::span<int32_t> host_holders) const;

 private:
  uint64_t Submit(const Move& m);
  void Finish(const Move& m, const Status& st);

  TierStore& store_;
  BlockMover mover_;
  std::unordered_map<uint64_t, Move> moves_;  // in flight, by tag
  uint64_t next_tag_ = 1;
  double load_delay_s_ = 0;
};

}  // namespace pg
