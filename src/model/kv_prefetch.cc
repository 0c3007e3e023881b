#include "model/kv_prefetch.h"

#include <algorithm>

#include "base/prefetch.h"

namespace pg {

void PrefetchKeys(const AttentionArgs& a, int64_t j0, int64_t n) {
  const KvPages& kv = *a.kv;
  const size_t row_bytes = static_cast<size_t>(a.head_dim) * sizeof(uint16_t);
  const int64_t pt = kv.page_tokens();
  for (int64_t j = j0; j < j0 + n; ++j) {
    const int32_t block = a.block_table[j / pt];
    for (int kv_index = 0; kv_index < 2; ++kv_index)  // K, then V
      PrefetchLines(kv.Row(block, a.layer, kv_index, j % pt) + a.kv_head * a.head_dim, row_bytes);
  }
}

std::pair<int64_t, int64_t> TilesAhead(int64_t j0, int64_t n_keys) {
  constexpr int64_t kT = kAttentionTileKeys;
  const int64_t from = std::min(n_keys, j0 == 0 ? 0 : j0 + kPrefetchTiles * kT);
  return {from, std::max(from, std::min(n_keys, j0 + (kPrefetchTiles + 1) * kT))};
}

void PrefetchTilesAhead(const AttentionArgs& a, int64_t j0, int64_t n_keys) {
  const auto [begin, end] = TilesAhead(j0, n_keys);
  if (begin < end) PrefetchKeys(a, begin, end - begin);
}

}  // namespace pg
