// Private to attention_tiled_avx2.cc: the dot products of a tile reached by
// few queries (decode: one row's GQA group), read straight from the tile's
// f16 K rows and converted in registers, keys along the rows as stored.
//
// A block of NQ queries meets KP keys at a time (NQ x KP = 8 accumulators;
// NQ = 3 takes 2 keys, 6): per 8 dimensions, KP row loads converted once
// feed NQ queries, and each query's chunk feeds KP keys, so the FMAs, not the
// loads or conversions, set the pace. Accumulator (j, i) sums the reference's
// lane l over d = l, l + 8, ... in increasing d (attention.h); Reduce8x8 then
// gives each the reference's ((l0+l1)+(l2+l3)) + ((l4+l5)+(l6+l7)). So every
// score has the scalar dot's bits, and no f32 copy of the tile is written:
// in a decode step the rows come from DRAM, and their loads overlap the
// arithmetic instead of waiting in a conversion pass. The first block of a
// tile also prefetches the tile kPrefetchTiles on, a few lines per key group
// (a burst of a whole tile's 128 lines stalls the core's loads).
//
// Internal linkage on purpose, like attention_exp.h: only the AVX2
// translation unit includes it.
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "backend/cpu/simd_avx2.h"
#include "base/prefetch.h"
#include "model/attention.h"

namespace pg {
namespace {

// [reduce(c[0]), ..., reduce(c[7])], reduce(x) = ((x0+x1)+(x2+x3)) +
// ((x4+x5)+(x6+x7)): hadd(a, b) = [a0+a1, a2+a3, b0+b1, b2+b3 | a4+a5, a6+a7,
// b4+b5, b6+b7].
inline __m256 Reduce8x8(const __m256* c) {
  const __m256 h0123 = _mm256_hadd_ps(_mm256_hadd_ps(c[0], c[1]), _mm256_hadd_ps(c[2], c[3]));
  const __m256 h4567 = _mm256_hadd_ps(_mm256_hadd_ps(c[4], c[5]), _mm256_hadd_ps(c[6], c[7]));
  // low halves: (l0+l1)+(l2+l3) of c0-3 / c4-7; high halves: (l4+l5)+(l6+l7).
  const __m256 lo = _mm256_permute2f128_ps(h0123, h4567, 0x20);
  const __m256 hi = _mm256_permute2f128_ps(h0123, h4567, 0x31);
  return _mm256_add_ps(lo, hi);
}

// sc[j][k0 + i] = scale * dot(q[j], key k0 + i) for j < NQ, i < KP; the keys'
// f16 rows k_rows[k0 + i], C = head_dim / 8.
template <int NQ, int KP>
[[gnu::always_inline]] inline void DotRowsF16(const float* const* q, const uint16_t* const* k_rows, int64_t k0,
                                              int64_t C, __m256 vscale, float (*sc)[kAttentionTileKeys]) {
  static_assert(NQ * KP <= 8);
  __m256 c[8];
  for (int x = 0; x < 8; ++x) c[x] = _mm256_setzero_ps();
#pragma GCC unroll 8
  for (int64_t ch = 0; ch < C; ++ch) {
    __m256 k[KP];
    for (int i = 0; i < KP; ++i) k[i] = avx2::LoadF16(k_rows[k0 + i] + 8 * ch);
    for (int j = 0; j < NQ; ++j) {
      const __m256 qv = _mm256_loadu_ps(q[j] + 8 * ch);
      for (int i = 0; i < KP; ++i) c[KP * j + i] = _mm256_fmadd_ps(qv, k[i], c[KP * j + i]);
    }
  }
  alignas(32) float r[8];
  _mm256_store_ps(r, _mm256_mul_ps(Reduce8x8(c), vscale));
  for (int j = 0; j < NQ; ++j)
    for (int i = 0; i < KP; ++i) sc[j][k0 + i] = r[KP * j + i];
}

// Rows to prefetch while a tile is scored: k[i] and v[i] for i < n, each
// `bytes` long (the tile kPrefetchTiles on, kv_prefetch.h).
struct RowsAhead {
  const uint16_t* const* k = nullptr;
  const uint16_t* const* v = nullptr;
  int64_t n = 0;
  size_t bytes = 0;
};

// Every line of rows [i0, i1) of `ahead`.
inline void PrefetchRows(const RowsAhead& ahead, int64_t i0, int64_t i1) {
  for (int64_t i = i0; i < std::min(i1, ahead.n); ++i) {
    PrefetchLines(ahead.k[i], ahead.bytes);
    PrefetchLines(ahead.v[i], ahead.bytes);
  }
}

// sc[j][0, kAttentionTileKeys) for NQ (1-4) queries: keys [0, nt) scored
// (k_rows valid or kZeroKeyRow up to nt rounded up to 8), the rest -inf;
// the rows of `ahead` prefetched on the way.
template <int NQ>
inline void DotBlockByKey(const float* const* q, const uint16_t* const* k_rows, int64_t nt, int64_t hd, float scale,
                          const RowsAhead& ahead, float (*sc)[kAttentionTileKeys]) {
  constexpr int KP = NQ == 3 ? 2 : 8 / NQ;
  const __m256 vscale = _mm256_set1_ps(scale);
  const int64_t n8 = (nt + 7) & ~int64_t{7};
  // The rows ahead go a few lines per key group, spread over the tile: a burst
  // of them fills the core's miss buffers and stalls its loads.
  const int64_t per = (ahead.n + n8 / KP - 1) / (n8 / KP);
  for (int64_t k0 = 0, a0 = 0; k0 < n8; k0 += KP, a0 += per) {
    PrefetchRows(ahead, a0, a0 + per);
    // The common head dims as constants: their chunk loops unroll (-3% in
    // cache, -8% from DRAM at 64, docs/performance.md "Attention kernels").
    if (hd == 64)
      DotRowsF16<NQ, KP>(q, k_rows, k0, 8, vscale, sc);
    else if (hd == 128)
      DotRowsF16<NQ, KP>(q, k_rows, k0, 16, vscale, sc);
    else
      DotRowsF16<NQ, KP>(q, k_rows, k0, hd / 8, vscale, sc);
  }
  for (int j = 0; j < NQ; ++j)
    for (int64_t i = n8; i < kAttentionTileKeys; ++i) sc[j][i] = -INFINITY;
}

}  // namespace
}  // namespace pg
