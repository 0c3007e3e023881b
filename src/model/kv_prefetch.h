// PrefetchKeys: software prefetch of the K and V rows of keys [j0, j0 + n)
// of one kv head (AttentionArgs: its layer, head and block table);
// PrefetchTilesAhead: what the tiled attention kernels call at the start of
// each tile, to have the rows kPrefetchTiles tiles on in L1 when they get there.
//
// Why: in a decode step a sequence's K/V comes from DRAM (the weights the
// step streams push it out of the caches), and each 32-key tile's rows sit
// in a few scattered KV blocks, one short strided run per block and layer,
// where the hardware prefetcher does not reach in time. Measured on the
// decode kernel with the model's KV layout and a weight stream between
// layers (docs/performance.md, "Decode attention from DRAM"): 2048 keys, 4
// queries per kv head, 10-11.5 ns per (query, key) without, 5-6 with.
//
// Thread-safety: a hint; reads only the block table.
#pragma once

#include <algorithm>
#include <cstdint>

#include "base/prefetch.h"
#include "model/attention.h"

namespace pg {

inline constexpr int64_t kPrefetchTiles = 4;

inline void PrefetchKeys(const AttentionArgs& a, int64_t j0, int64_t n) {
  const KvPages& kv = *a.kv;
  const auto row_bytes = static_cast<uintptr_t>(a.head_dim) * sizeof(uint16_t);
  const int64_t pt = kv.page_tokens();
  for (int64_t j = j0; j < j0 + n; ++j) {
    const int32_t block = a.block_table[j / pt];
    for (int kv_index = 0; kv_index < 2; ++kv_index) {  // K, then V
      const auto row = reinterpret_cast<uintptr_t>(kv.Row(block, a.layer, kv_index, j % pt) + a.kv_head * a.head_dim);
      for (uintptr_t line = row & ~uintptr_t{63}; line < row + row_bytes; line += 64)
        PrefetchL1(reinterpret_cast<const void*>(line));
    }
  }
}

// At tile j0 (a multiple of kAttentionTileKeys) of keys [0, n_keys): the
// rows of tile j0 + kPrefetchTiles, and at the first tile those of the
// tiles before it too.
inline void PrefetchTilesAhead(const AttentionArgs& a, int64_t j0, int64_t n_keys) {
  constexpr int64_t kT = kAttentionTileKeys;
  const int64_t from = j0 == 0 ? 0 : j0 + kPrefetchTiles * kT;
  const int64_t to = std::min(n_keys, j0 + (kPrefetchTiles + 1) * kT);
  if (from < to) PrefetchKeys(a, from, to - from);
}

}  // namespace pg
