// AVX2 + F16C + FMA version of AttendGroupScalar, in blocks of up to four
// queries that share each K and V load. A tile reached by more than
// kRowMaxQueries queries (a prefill task's rows and heads) is converted to
// f32 once, K by dimension (attention_keys_avx2.h), and shared by every
// block; one reached by fewer (a decode row's heads) is read straight from
// its f16 rows, converted in registers (attention_rows_avx2.h). Per query,
// the same operations in the same order as the scalar reference, so results
// are bit-identical to computing that query alone.
//
// scratch: attention_group_f16c.h's layout, kt by dimension (kt[d][key];
// keys past the last: 0).
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "model/attention.h"
#include "model/attention_exp.h"
#include "model/attention_group_f16c.h"
#include "model/attention_keys_avx2.h"
#include "model/attention_rows_avx2.h"
#include "model/attention_tiles.h"
#include "model/kv_prefetch.h"

namespace pg {
namespace {

constexpr int64_t kT = kAttentionTileKeys;
static_assert(kT % 8 == 0);

inline void ConvertRow(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t d = 0; d < n; d += 8) _mm256_storeu_ps(dst + d, avx2::LoadF16(src + d));
}

constexpr int kBlockQueries = 4;  // queries sharing each K/V load
// Tiles reached by at most this many queries (a decode row's 8 heads, whose
// K/V come from DRAM) are read straight from their f16 rows
// (attention_rows_avx2.h); more (a prefill task's rows and heads, whose K/V
// are in cache) share one f32 copy of the tile, K by dimension.
constexpr int64_t kRowMaxQueries = 8;

using Group = TiledGroup;

// The tile's V rows: the f32 copy (vt[key][hd]) or the f16 rows as stored.
struct VTileF32 {
  const float* vt;
  int64_t hd;
  __m256 Load(int64_t i, int64_t d) const { return _mm256_loadu_ps(vt + i * hd + d); }
};
struct VRowsF16 {
  const uint16_t* const* rows;
  __m256 Load(int64_t i, int64_t d) const { return avx2::LoadF16(rows[i] + d); }
};

// The V update of NQ queries on dims [d0, d0 + 8 R): acc = acc * alpha (when
// alpha != 1), then acc = fma(p_i, v_i, acc) for keys i < nt[j] in order.
// Keys below nt_min are shared by all NQ queries; each query's own tail
// follows.
template <int NQ, int R, typename VSrc>
[[gnu::always_inline]] inline void PvBlock(float* const* acc, const float (*p)[kT], const float* alpha,
                                           const int64_t* nt, int64_t nt_min, const VSrc& v, int64_t d0) {
  __m256 r[NQ][R];
  for (int j = 0; j < NQ; ++j) {
    for (int x = 0; x < R; ++x) r[j][x] = _mm256_loadu_ps(acc[j] + d0 + 8 * x);
    if (alpha[j] != 1.0f) {
      const __m256 va = _mm256_set1_ps(alpha[j]);
      for (int x = 0; x < R; ++x) r[j][x] = _mm256_mul_ps(r[j][x], va);
    }
  }
  for (int64_t i = 0; i < nt_min; ++i) {
    __m256 vv[R];
    for (int x = 0; x < R; ++x) vv[x] = v.Load(i, d0 + 8 * x);
    for (int j = 0; j < NQ; ++j) {
      const __m256 pb = _mm256_broadcast_ss(p[j] + i);
      for (int x = 0; x < R; ++x) r[j][x] = _mm256_fmadd_ps(pb, vv[x], r[j][x]);
    }
  }
#pragma GCC unroll 8  // r stays in registers only if j is a constant
  for (int j = 0; j < NQ; ++j)
    for (int64_t i = nt_min; i < nt[j]; ++i) {
      const __m256 pb = _mm256_broadcast_ss(p[j] + i);
      for (int x = 0; x < R; ++x) r[j][x] = _mm256_fmadd_ps(pb, v.Load(i, d0 + 8 * x), r[j][x]);
    }
  for (int j = 0; j < NQ; ++j)
    for (int x = 0; x < R; ++x) _mm256_storeu_ps(acc[j] + d0 + 8 * x, r[j][x]);
}

// The softmax step and V update of NQ queries over a tile whose scores are
// sc: R dims' registers per query (NQ x R <= 8 accumulators).
template <int NQ, typename VSrc>
[[gnu::always_inline]] inline void SoftmaxPv(const Group& g, const int64_t* idx, const int64_t* nt, float (*sc)[kT],
                                             const VSrc& v) {
  alignas(32) float p[NQ][kT];
  float* acc[NQ];
  float alpha[NQ];
  int64_t nt_min = kT;
  for (int j = 0; j < NQ; ++j) {
    acc[j] = g.acc + idx[j] * g.hd;
    nt_min = std::min(nt_min, nt[j]);
    alpha[j] = TileSoftmax(sc[j], p[j], nt[j], &g.ms[idx[j]], &g.ss[idx[j]]);
  }
  constexpr int R = NQ <= 2 ? 8 / NQ : 2;
  int64_t d0 = 0;
  for (; d0 + 8 * R <= g.hd; d0 += 8 * R) PvBlock<NQ, R>(acc, p, alpha, nt, nt_min, v, d0);
  for (; d0 < g.hd; d0 += 8) PvBlock<NQ, 1>(acc, p, alpha, nt, nt_min, v, d0);
}

// One tile's update of the NQ queries idx[0, NQ), whose keys in this tile
// are [0, nt[j]) (each >= 1); kt by dimension, vt by key. Inlined into
// its caller: out of line, GCC 12 spills one of PvBlock's V registers to the
// stack every key (5.5 against 4.4 ns per (query, key) at 32 queries,
// docs/performance.md "Attention kernels").
template <int NQ>  // 3 or 4
[[gnu::always_inline]] inline void TileBlock(const Group& g, const float* kt, const float* vt, const int64_t* idx,
                                             const int64_t* nt) {
  alignas(32) float sc[NQ][kT];
  const float* q[NQ];
  for (int j = 0; j < NQ; ++j) q[j] = g.qr + idx[j] * g.hd;
  DotBlockByDim<NQ>(q, kt, g.hd / 8, g.scale, sc);
  SoftmaxPv<NQ>(g, idx, nt, sc, VTileF32{vt, g.hd});
}

// The same for NQ (1-4) queries straight from the tile's f16 rows.
template <int NQ>
void RowsBlock(const Group& g, const uint16_t* const* k_rows, const uint16_t* const* v_rows, const RowsAhead& ahead,
               const int64_t* idx, const int64_t* nt) {
  alignas(32) float sc[NQ][kT];
  const float* q[NQ];
  int64_t nt_max = 0;
  for (int j = 0; j < NQ; ++j) {
    q[j] = g.qr + idx[j] * g.hd;
    nt_max = std::max(nt_max, nt[j]);
  }
  DotBlockByKey<NQ>(q, k_rows, nt_max, g.hd, g.scale, ahead, sc);
  SoftmaxPv<NQ>(g, idx, nt, sc, VRowsF16{v_rows});
}

// A block of n = 3 or 4 queries: ForEachQueryBlock splits n_active >= 9
// into ceil(n_active / 4) blocks of even size, at least three each.
static_assert(kBlockQueries == 4 && kRowMaxQueries >= 8);
void RunBlock(const Group& g, const float* kt, const float* vt, const int64_t* idx, const int64_t* nt, int n) {
  if (n == 3) return TileBlock<3>(g, kt, vt, idx, nt);
  TileBlock<4>(g, kt, vt, idx, nt);
}

// A block of n = 1-4 queries (n_active <= kRowMaxQueries).
void RunRowsBlock(const Group& g, const uint16_t* const* k_rows, const uint16_t* const* v_rows, const RowsAhead& ahead,
                  const int64_t* idx, const int64_t* nt, int n) {
  switch (n) {
    case 1: return RowsBlock<1>(g, k_rows, v_rows, ahead, idx, nt);
    case 2: return RowsBlock<2>(g, k_rows, v_rows, ahead, idx, nt);
    case 3: return RowsBlock<3>(g, k_rows, v_rows, ahead, idx, nt);
    default: return RowsBlock<4>(g, k_rows, v_rows, ahead, idx, nt);
  }
}

}  // namespace

void AttendGroupAvx2(const AttentionArgs& a, std::span<const AttentionQuery> queries, float* scratch) {
  const int64_t HD = a.head_dim;  // multiple of 8, <= 512
  const TiledScratch st = StartTiledGroup(a, queries, scratch);
  const Group& g = st.g;
  float* kt = st.kt;
  float* vt = st.vt;
  int64_t n_max = 0;
  for (const AttentionQuery& query : queries) n_max = std::max(n_max, query.n_keys);
  const uint16_t* k_rows[kT];
  const uint16_t* v_rows[kT];
  for (int64_t j0 = 0; j0 < n_max; j0 += kT) {
    const int64_t nt_max = std::min(kT, n_max - j0);
    TileRows(a, j0, nt_max, kT, k_rows, v_rows);
    const int64_t n_active =
        std::count_if(queries.begin(), queries.end(), [&](const AttentionQuery& query) { return query.n_keys > j0; });
    // The first tiles are prefetched at once, and a prefill tile prefetches
    // the tile kPrefetchTiles on as it starts (kv_prefetch.h); the rows path
    // spreads that over its first block's key groups (below).
    const bool by_dim = n_active > kRowMaxQueries;
    if (by_dim || j0 == 0) PrefetchTilesAhead(a, j0, n_max);
    if (by_dim) {
      ConvertKTileByDim(k_rows, HD, kt);
      for (int64_t i = 0; i < nt_max; ++i) ConvertRow(v_rows[i], vt + i * HD, HD);
      ForEachQueryBlock<kBlockQueries>(queries, j0, n_active, [&](const int64_t* idx, const int64_t* nt, int n) {
        RunBlock(g, kt, vt, idx, nt, n);
      });
      continue;
    }
    // The first block prefetches the tile kPrefetchTiles on as it scores
    // this one (kv_prefetch.h); the first tiles went at once above.
    RowsAhead ahead;
    const uint16_t* k_ahead[kT];
    const uint16_t* v_ahead[kT];
    if (const auto [from, to] = TilesAhead(j0, n_max); j0 > 0 && from < to) {
      ahead = {k_ahead, v_ahead, to - from, static_cast<size_t>(HD) * sizeof(uint16_t)};
      TileRows(a, from, ahead.n, ahead.n, k_ahead, v_ahead);
    }
    ForEachQueryBlock<kBlockQueries>(queries, j0, n_active, [&](const int64_t* idx, const int64_t* nt, int n) {
      RunRowsBlock(g, k_rows, v_rows, ahead, idx, nt, n);
      ahead.n = 0;
    });
  }
  WriteTiledOutputs(queries, g);
}

}  // namespace pg
