// PrefetchKeys: software prefetch of the K and V rows of keys [j0, j0 + n)
// of one kv head (AttentionArgs: its layer, head and block table);
// PrefetchTilesAhead: what the tiled attention kernels call at the start of
// each tile, to have the rows kPrefetchTiles tiles on in L1 when they get
// there (the AVX2 decode path spreads each tile's over its key groups
// instead: attention_rows_avx2.h).
//
// Why: in a decode step a sequence's K/V comes from DRAM (the weights the
// step streams push it out of the caches), and each 32-key tile's rows sit
// in a few scattered KV blocks, one short strided run per block and layer,
// where the hardware prefetcher does not reach in time. Measured on the
// decode kernel with the model's KV layout and a weight stream between
// layers (docs/performance.md, "Decode attention from DRAM"): 2048 keys, 4
// queries per kv head, 10-11.5 ns per (query, key) without, 5-6 with.
//
// Defined in kv_prefetch.cc, compiled without ISA flags: the AVX2 and AVX-512
// kernels both call it, and an inline copy built with AVX-512 flags could be
// the one linked into the AVX2 path.
//
// Thread-safety: a hint; reads only the block table.
#pragma once

#include <cstdint>
#include <utility>

#include "model/attention.h"

namespace pg {

inline constexpr int64_t kPrefetchTiles = 4;

void PrefetchKeys(const AttentionArgs& a, int64_t j0, int64_t n);

// At tile j0 (a multiple of kAttentionTileKeys) of keys [0, n_keys): the
// rows of tile j0 + kPrefetchTiles, and at the first tile those of the
// tiles before it too; TilesAhead gives those keys as [first, second).
std::pair<int64_t, int64_t> TilesAhead(int64_t j0, int64_t n_keys);
void PrefetchTilesAhead(const AttentionArgs& a, int64_t j0, int64_t n_keys);

}  // namespace pg
