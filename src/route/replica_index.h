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

  mutable std::mutex mu_;
  int block_size_ = 0;
  std::unordered_map<EventBlockHash, Block> blocks_;
  std::unordered_map<uint64_t, EventBlockHash> child_;  // ChildKey -> block hash
};

}  // namespace pg
