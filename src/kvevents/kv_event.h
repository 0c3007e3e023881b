// KvEvent: what the KV tiers tell a router about the blocks they hold, in
// the shape of vLLM's KV events (vllm/distributed/kv_events.py), which
// llm-d's precise prefix-cache scorer and Dynamo's KV indexer consume:
//   BlockStored      full blocks newly held by a tier: their chained hashes,
//                    the hash of the block before the first (none at the
//                    start of a sequence), their tokens, tokens per block,
//                    and the tier ("medium")
//   BlockRemoved     blocks a tier no longer holds
//   AllBlocksCleared every tier dropped everything
// A block's hash is the first 63 bits (big-endian) of prosgrow's chained
// SHA-256 block hash (kv/block_hash.h), sent as a msgpack positive integer:
// vLLM's ExternalBlockHash is bytes or int, and consumers written for its
// integer hashes read it whether they decode signed or unsigned 64-bit.
// Plain value types.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace pg {

using EventBlockHash = uint64_t;

// The event hash of a 32-byte chained block hash.
EventBlockHash EventHashOf(const uint8_t (&sha256)[32]);
EventBlockHash EventHashOf(const uint8_t* sha256);

// The tiers as media: "GPU" is the device tier (vLLM's name for the
// accelerator's memory; prosgrow's device tier on the CPU backend too),
// "CPU" the host tier, "DISK" the disk tier, "REMOTE" a shared store.
inline constexpr const char* kMediumDevice = "GPU";
inline constexpr const char* kMediumHost = "CPU";
inline constexpr const char* kMediumDisk = "DISK";
inline constexpr const char* kMediumRemote = "REMOTE";

struct BlockStoredEvent {
  std::vector<EventBlockHash> block_hashes;
  std::optional<EventBlockHash> parent_block_hash;
  std::vector<int32_t> token_ids;  // block_hashes.size() * block_size tokens
  int32_t block_size = 0;
  std::string medium;
};

struct BlockRemovedEvent {
  std::vector<EventBlockHash> block_hashes;
  std::string medium;
};

struct AllBlocksClearedEvent {};

using KvEvent = std::variant<BlockStoredEvent, BlockRemovedEvent, AllBlocksClearedEvent>;

struct KvEventBatch {
  double ts = 0;  // seconds since the epoch
  std::vector<KvEvent> events;
  std::optional<int32_t> data_parallel_rank;  // omitted when absent
};

}  // namespace pg
