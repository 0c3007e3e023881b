// ReplicaIndex: what one replica's KV tiers hold, rebuilt from its KV events
// (BlockStored / BlockRemoved / AllBlocksCleared): every block's tokens, its
// parent and the media (tiers) holding it. The router asks it how long a
// prefix of a prompt's tokens the replica holds.
//
// Blocks are found by (parent hash, block tokens), the way the replica chains
// them, so the router needs no knowledge of the replica's hash function; the
// tokens are compared on every hit. A replica that publishes hashes only
// (--kv-events-tokens off, the default with API keys) is matched on the
// prompt's block hashes instead, which the replica's /tokenize computes for
// the caller's own tenant and cache_salt (PromptBlocks::block_hashes): the
// chain of hashes must be held from the first block on.
//
// Bounded: at most max_blocks blocks (a block stored past that is not
// recorded, and counted in dropped()), of at most kMaxBlockSize tokens each
// (events with larger blocks are ignored); one block costs at most
// BlockBytes() = kBlockOverheadBytes + 4 bytes per token.
//
// Thread-safety: all methods lock; the subscriber thread applies events while
// HTTP threads match.
#pragma once

#include <cstdint>
#include <mutex>
#include <span>
#include <string>
#include <unordered_map>
#include <vector>

#include "kvevents/kv_event.h"

namespace pg {

// What the router knows of a prompt: its token ids and its full blocks'
// event hashes, both from a replica's /tokenize.
struct PromptBlocks {
  std::vector<int32_t> tokens;
  std::vector<EventBlockHash> block_hashes;
};

class ReplicaIndex {
 public:
  static constexpr size_t kDefaultMaxBlocks = size_t{1} << 20;
  static constexpr int kMaxBlockSize = 1024;
  // Two hash-map nodes and buckets, the block record and the allocator's headers.
  static constexpr size_t kBlockOverheadBytes = 128;

  explicit ReplicaIndex(size_t max_blocks = kDefaultMaxBlocks) : max_blocks_(max_blocks) {}

  void Apply(const KvEventBatch& batch);
  void Clear();

  struct Match {
    int64_t tokens = 0;         // the longest prefix held in any tier
    int64_t device_tokens = 0;  // ... of which the leading run held in the device tier ("GPU")
  };
  // The longest prefix of whole blocks of `prompt` this replica holds.
  Match Longest(std::span<const int32_t> prompt) const;
  // The longest run of `block_hashes` (a prompt's full blocks, in order)
  // held as one chain from the first, in tokens.
  Match LongestByHashes(std::span<const EventBlockHash> block_hashes) const;

  size_t blocks() const;
  // Blocks held per medium ("GPU", "CPU", "DISK", ...).
  std::unordered_map<std::string, int64_t> BlocksPerMedium() const;
  int block_size() const;
  size_t max_blocks() const { return max_blocks_; }
  // Bytes one block costs at most (at the replica's block size; 16 before its first event).
  size_t BlockBytes() const;
  size_t bytes() const { return blocks() * BlockBytes(); }
  size_t bound_bytes() const { return max_blocks_ * BlockBytes(); }
  uint64_t dropped() const;  // blocks not recorded because the index was full

 private:
  struct Block {
    bool has_parent = false;
    EventBlockHash parent = 0;
    std::vector<int32_t> tokens;  // empty when the event carried none
    uint8_t media = 0;            // bit per medium (MediumBit)
  };
  static uint64_t ChildKey(bool has_parent, EventBlockHash parent, std::span<const int32_t> tokens);
  void Stored(const BlockStoredEvent& e);
  void Removed(const BlockRemovedEvent& e);

  const size_t max_blocks_;
  mutable std::mutex mu_;
  int block_size_ = 0;
  uint64_t dropped_ = 0;
  std::unordered_map<EventBlockHash, Block> blocks_;
  std::unordered_map<uint64_t, EventBlockHash> child_;  // ChildKey -> block hash
};

}  // namespace pg
