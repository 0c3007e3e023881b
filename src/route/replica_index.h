// ReplicaIndex: what one replica's KV tiers hold, rebuilt from its KV events
// (BlockStored / BlockRemoved / AllBlocksCleared): every block's tokens, its
// parent and the media (tiers) holding it. The router asks it how long a
// prefix of a prompt's tokens the replica holds.
//
// Blocks are found by (parent hash, block tokens), the way the replica chains
// them, so the router needs no knowledge of the replica's hash function; the
// tokens are compared on every hit.
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

  size_t blocks() const;
  // Blocks held per medium ("GPU", "CPU", "DISK", ...).
  std::unordered_map<std::string, int64_t> BlocksPerMedium() const;
  int block_size() const;

 private:
  struct Block {
    bool has_parent = false;
    EventBlockHash parent = 0;
    std::vector<int32_t> tokens;
    uint8_t media = 0;  // bit per medium (MediumBit)
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
