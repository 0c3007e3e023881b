// TierMover: the block copies in flight between tiers. Every copy is one
// (from, to) pair of tiers and runs the same road whatever the pair:
// demotions (device -> host, host or device -> disk), promotions (host or
// disk -> device), imports (remote -> device) and write-behind (device ->
// remote).
//
// Start records the copy in the index (the target copy exists but is not
// ready), pins both sides as their media say (TierStore::PinSource,
// ClaimTarget: a slot reference, a file read or write counted, nothing for
// staged bytes), and queues a job on the BlockMover threads
// that reads the block out of the source medium and writes it into the
// target medium (media/block_medium.h). Jobs go into one of two lanes, each
// with io_threads threads of its own: loads into the device (promotions,
// remote imports) and every other copy (demotions, write-behind). A copy
// down that an eviction waits for on the scheduler thread thus never queues
// behind a load, however slow its tier. Nothing needs an order across the
// lanes: a copy starts only from a source copy that is ready or present,
// i.e. whose own copy was collected. Collect() takes finished copies
// back on the scheduler thread and ends both sides: the target copy becomes
// ready (or, when the copy failed, is given up), a failed disk read drops
// the file, a failed disk write stops disk writes
// (TierStore::DisableDiskWrites), the pins are dropped and the counters
// updated. Room is made before a Start (TierAllocator), never here.
//
// Thread-safety: scheduler thread only, except the copy jobs themselves,
// which touch only the pinned blocks, through their media's calls.
#pragma once

#include <cstdint>
#include <unordered_map>

#include "base/function_ref.h"
#include "kv/kv_cache_config.h"
#include "kv/media/tier_store.h"
#include "kv/movement/block_mover.h"

namespace pg {

class TierMover {
 public:
  struct Move {
    uint32_t entry = 0;
    Tier from = kDeviceTier;
    Tier to = kDeviceTier;
    int32_t from_slot = -1;  // pinned source slot (slot tiers), -1 = none
    int32_t to_slot = -1;    // pinned target slot (slot tiers), -1 = none
    // The pinned slot of slot tier t in this move, -1 = none.
    int32_t slot_in(int t) const { return from == t ? from_slot : to == t ? to_slot : -1; }
    // Tiers are numbered from the top (the device): a copy up is a load
    // (a promotion or a remote import), any other a copy down.
    bool up() const { return to < from; }
  };

  enum Lane : int { kLoadLane, kStoreLane, kLanes };  // kLanes: their number
  static_assert(kLanes == KvCacheConfig::kMoverLanes, "KvCacheConfig::mover_threads() sizes the staging pool");
  // io_threads threads per lane; the store's staging pool needs one buffer
  // per thread (KvCacheConfig::mover_threads, checked).
  TierMover(TierStore& store, int io_threads);
  // Fault injection: each promotion (host or disk -> device) job sleeps this
  // long first (a slow tier); it holds a load-lane thread meanwhile.
  void set_load_delay(double seconds) { load_delay_s_ = seconds; }

  // Copies entry id from tier `from` to tier `to`. The source copy must be
  // usable (a file for the disk; staged bytes for the remote tier). A slot
  // target is `to_slot`, allocated by the caller, who keeps its own
  // reference; the move takes one more as its pin. A disk target needs room
  // and a writable disk. Returns the move's tag.
  uint64_t Start(uint32_t id, Tier from, Tier to, int32_t to_slot = -1);

  // Finishes the copies that are done (with wait: at least one, blocking,
  // when some are in flight); `then` runs after each one is finished.
  void Collect(bool wait, FunctionRef<void(const Move&)> then);
  bool empty() const { return moves_.empty(); }
  bool in_flight(uint64_t tag) const { return moves_.count(tag) != 0; }
  const std::unordered_map<uint64_t, Move>& moves() const { return moves_; }
  // Adds the slots each move pins to per-slot holder counts.
  void CountPins(std::span<int32_t> device_holders, std::span<int32_t> host_holders) const;

 private:
  void Submit(uint64_t tag, const Move& m, const IndexEntry& e);
  void Finish(const Move& m, const Status& st);

  TierStore& store_;
  BlockMover mover_;
  std::unordered_map<uint64_t, Move> moves_;  // in flight, by tag
  uint64_t next_tag_ = 1;
  double load_delay_s_ = 0;
};

}  // namespace pg
