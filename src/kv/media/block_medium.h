// BlockMedium: the one storage interface of the KV tiers. Each medium is one
// class behind it: SlotTier (device slots, host slots: one class, two
// arenas), DiskTier (one file per block), RemoteTier (Redis / Valkey).
// TierMover runs every copy as a (from, to) pair of media: the block is read
// out of `from` and written into `to`, through host memory, and nothing else
// touches a medium's bytes (the forward seam: on a GPU the device medium's
// bytes are device memory, reachable only through its own copy calls).
//
// A copy names the block by BlockRef: its slot in a slot medium, its
// identity (hash, parent, depth, tokens) in the disk and remote media. Each
// medium says how a copy pins its side of the block (pinning(); TierStore
// keeps the pins) and how many bytes a block takes in it.
//
// Thread-safety: Read / Write / Staging run on the mover threads, on blocks
// the scheduler thread pinned for the copy; each medium says what else may
// run at the same time.
#pragma once

#include <cstdint>
#include <vector>

#include "base/kv_tier.h"
#include "base/status.h"
#include "kv/index/block_hash.h"

namespace pg {

// How a copy pins a medium's copy of a block while it reads or writes it.
enum class Pinning {
  kSlot,    // a slot reference on each side; a target slot is owned by its entry at once
  kFile,    // a file: readers counted on the entry's copy; a write counted in the disk budget
  kStaged,  // nothing: the bytes were staged in the medium before the copy (the remote tier)
};

struct BlockRef {
  int32_t slot = -1;  // slot media: the slot; -1 otherwise
  BlockHash hash;     // disk / remote media: the block's identity
  BlockHash parent;
  int32_t depth = 0;
  std::vector<int32_t> tokens;  // page_tokens
};

class BlockMedium {
 public:
  virtual ~BlockMedium() = default;
  virtual Tier tier() const = 0;
  virtual Pinning pinning() const = 0;
  // Bytes one block takes in this medium (a slot; a file with its header).
  virtual uint64_t stored_bytes() const = 0;
  // Copies block b (block_bytes) out of this medium into host memory dst.
  virtual Status Read(const BlockRef& b, uint8_t* dst) = 0;
  // Copies block b into this medium from host memory src.
  virtual Status Write(const BlockRef& b, const uint8_t* src) = 0;
  // Host memory that holds b in this medium (the host tier's RAM), which the
  // other medium of a copy may read or fill directly; null when the medium's
  // bytes are not host memory (device, disk, remote): the copy then goes
  // through a staging buffer.
  virtual uint8_t* Staging(const BlockRef& b) { return nullptr; }
};

}  // namespace pg
