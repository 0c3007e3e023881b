// Encodes a KvEventBatch as vLLM's publisher puts it on the wire: msgpack,
// structs as arrays in field order (msgspec's array_like), each event
// tagged with its class name as the first element:
//   batch        [ts, [event...]] (+ data_parallel_rank when set)
//   BlockStored  ["BlockStored", [hash...], parent|nil, [token...],
//                 block_size, lora_id (nil), medium]
//   BlockRemoved ["BlockRemoved", [hash...], medium]
//   Cleared      ["AllBlocksCleared"]
// Thread-safety: pure function.
#pragma once

#include <string>

#include "kvevents/kv_event.h"

namespace pg {

std::string EncodeKvEventBatch(const KvEventBatch& batch);

}  // namespace pg
