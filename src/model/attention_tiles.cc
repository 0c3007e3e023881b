#include "model/attention_tiles.h"

#include <algorithm>

namespace pg {

alignas(64) const uint16_t kZeroKeyRow[512] = {};

void TileRows(const AttentionArgs& a, int64_t j0, int64_t n, int64_t n_pad, const uint16_t** k_rows,
              const uint16_t** v_rows) {
  const KvPages& kv = *a.kv;
  int64_t page = j0 / kv.page_tokens(), slot = j0 % kv.page_tokens();
  for (int64_t i = 0; i < n;) {
    const uint16_t* k = kv.Row(a.block_table[page], a.layer, 0, slot) + a.kv_head * a.head_dim;
    const uint16_t* v = kv.Row(a.block_table[page], a.layer, 1, slot) + a.kv_head * a.head_dim;
    const int64_t run = std::min(n - i, kv.page_tokens() - slot);
    for (int64_t r = 0; r < run; ++r, ++i) {
      k_rows[i] = k + r * kv.kv_dim();
      v_rows[i] = v + r * kv.kv_dim();
    }
    ++page;
    slot = 0;
  }
  for (int64_t i = n; i < n_pad; ++i) k_rows[i] = kZeroKeyRow;
}

}  // namespace pg
