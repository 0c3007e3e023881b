// Prompts built from trace hash ids: each id names one block of content, so
// prompts that start with equal ids start with equal tokens.
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <vector>

#include "bench/token_space.h"

namespace pg::bench {

// Scaled block length: max(1, round(block_tokens * length_scale)).
int64_t ScaledBlockTokens(int64_t block_tokens, double length_scale);

// Prompt for a trace request of `input_tokens` tokens whose first blocks are
// `hash_ids` (block_tokens each, before scaling):
//   - block i holds ScaledBlockTokens() tokens of block (scope, hash_ids[i]);
//   - tokens past the hashed blocks (input_tokens > ids * block_tokens) are
//     unique to the request: block (scope, tail_id), scaled by length_scale;
//   - when input_tokens < ids * block_tokens (a partial last block, as in
//     Mooncake) the prompt is cut to round(input_tokens * length_scale)
//     tokens, keeping at least one token of the last block.
// Returns the token ids.
std::vector<int32_t> HashedPrompt(const TokenSpace& space, uint64_t scope, const std::vector<int64_t>& hash_ids,
                                  int64_t block_tokens, int64_t input_tokens, double length_scale, uint64_t tail_id);

// Block id reserved for the unique tail of request `ordinal` of a session.
inline uint64_t TailBlockId(uint64_t ordinal) { return (uint64_t{1} << 63) | ordinal; }

}  // namespace pg::bench
