// What the AVX2 and AVX-512 tiled attention kernels share, none of it SIMD:
//   TileRows: the f16 K and V row pointers of one tile of a sequence's keys,
//     walking its KV pages (no division per key); rows past the tile's last
//     key point at kZeroKeyRow, so a kernel can read whole groups of 8 keys.
//     Defined in attention_tiles.cc, compiled without ISA flags (see
//     kv_prefetch.h for why not inline).
//   ForEachQueryBlock: the queries that reach a tile, in blocks that share
//     each K/V load.
//   TiledGroup: the per-query state of one call, in the kernel's scratch.
//
// Thread-safety: pure functions; TileRows reads only the block table and the
// pages' addresses.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>

#include "model/attention.h"

namespace pg {

// The per-query state of one AttendGroupAvx2 / AttendGroupAvx512 call.
struct TiledGroup {
  float* acc;       // [n_queries][hd] running weighted sums of V
  const float* qr;  // [n_queries][hd] the queries as the arithmetic uses them
  float* ms;        // [n_queries] running max
  float* ss;        // [n_queries] running sum of weights
  int64_t hd;
  float scale;
};

// Zeros, as many as the longest head dimension (attention.h: <= 512).
extern const uint16_t kZeroKeyRow[512];

// k_rows[i] and v_rows[i] for keys j0 + i, i in [0, n); k_rows[i] =
// kZeroKeyRow for i in [n, n_pad) (v_rows there are left as they were).
void TileRows(const AttentionArgs& a, int64_t j0, int64_t n, int64_t n_pad, const uint16_t** k_rows,
              const uint16_t** v_rows);

// The n_active queries that reach the tile at key j0, in blocks of at most
// kMax sized evenly (kMax 4: 5 -> 3 + 2, as a block of one query keeps too
// few FMAs in flight): fn(idx, nt, n) per block, with idx[0, n) the
// queries' indices and nt[0, n) their keys in the tile (each >= 1).
template <int kMax, typename Fn>
void ForEachQueryBlock(std::span<const AttentionQuery> queries, int64_t j0, int64_t n_active, Fn&& fn) {
  int64_t idx[kMax], nt[kMax];
  int64_t blocks_left = (n_active + kMax - 1) / kMax, left = n_active;
  int64_t size = (left + blocks_left - 1) / blocks_left;  // <= kMax
  int n = 0;
  for (size_t qi = 0; qi < queries.size(); ++qi) {
    if (queries[qi].n_keys <= j0) continue;
    idx[n] = static_cast<int64_t>(qi);
    nt[n] = std::min(kAttentionTileKeys, queries[qi].n_keys - j0);
    if (++n < size) continue;
    fn(idx, nt, n);
    left -= n;
    n = 0;
    if (--blocks_left > 0) size = (left + blocks_left - 1) / blocks_left;
  }
}

}  // namespace pg
