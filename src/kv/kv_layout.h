// The ids the KV cache hands out, and the block layout it shares with the
// forward pass (defined in base/kv_layout.h, which model/ includes too).
#pragma once

#include <cstdint>

#include "base/kv_layout.h"

namespace pg {

// Index of a block slot in the device tier (also the entries of a block table).
using BlockId = int32_t;
// Engine-chosen sequence id, unique among live sequences.
using SeqId = int64_t;

}  // namespace pg
