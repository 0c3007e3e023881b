#include "bench/hashed_prompt.h"

#include <algorithm>
#include <cmath>

namespace pg::bench {

int64_t ScaledBlockTokens(int64_t block_tokens, double length_scale) {
  return std::max<int64_t>(1, std::llround(static_cast<double>(block_tokens) * length_scale));
}

std::vector<int32_t> HashedPrompt(const TokenSpace& space, uint64_t scope, const std::vector<int64_t>& hash_ids,
                                  int64_t block_tokens, int64_t input_tokens, double length_scale, uint64_t tail_id) {
  const int64_t scaled_block = ScaledBlockTokens(block_tokens, length_scale);
  const int64_t n_blocks = static_cast<int64_t>(hash_ids.size());
  std::vector<int32_t> out;
  out.reserve(static_cast<size_t>(n_blocks * scaled_block + 16));
  for (int64_t id : hash_ids) space.AppendBlock(scope, static_cast<uint64_t>(id), scaled_block, &out);
  const int64_t extra = input_tokens - n_blocks * block_tokens;
  if (extra > 0) {
    int64_t tail = std::llround(static_cast<double>(extra) * length_scale);
    space.AppendBlock(scope, tail_id, tail, &out);
  } else if (extra < 0 && n_blocks > 0) {
    int64_t keep = std::llround(static_cast<double>(input_tokens) * length_scale);
    keep = std::clamp<int64_t>(keep, (n_blocks - 1) * scaled_block + 1, n_blocks * scaled_block);
    out.resize(static_cast<size_t>(keep));
  }
  if (out.empty()) space.AppendBlock(scope, tail_id, 1, &out);  // never send an empty prompt
  return out;
}

}  // namespace pg::bench
