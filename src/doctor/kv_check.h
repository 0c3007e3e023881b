// The "kv cache" line of `prosgrow doctor`: what one token costs in a KV
// block (K and V rows, or an MLA latent row, plus a DSA indexer key per
// indexer layer), the block's size, and how many tokens each memory tier
// holds at that size. The what-if estimates and the tier capacities use the
// same bytes (KvLayout::block_bytes). Thread-safety: pure function.
#pragma once

#include <cstdint>

#include "base/kv_layout.h"
#include "doctor/check.h"

namespace pg {

struct KvTierBytes {
  uint64_t device = 0;
  uint64_t host = 0;  // 0 = no host tier
  uint64_t disk = 0;  // 0 = no disk tier
};

// One line: "per token B (parts); block of N tokens B; device holds T tokens ...".
CheckResult CheckKvBytes(const KvLayout& layout, const KvTierBytes& tiers);

// The parts of one token's bytes, e.g. "3 layers x latent 72 x f16 + 2
// indexer layers x key 64 x f16" or "24 layers x K+V 8 x 64 x f16".
std::string KvTokenParts(const KvLayout& layout);

}  // namespace pg
