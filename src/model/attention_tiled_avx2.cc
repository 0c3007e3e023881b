// AVX2 + F16C + FMA version of AttendGroupScalar: each K/V tile is converted
// to f32 once and shared by every query of the group. A tile reached by more
// than kRowMaxQueries queries (a prefill task's rows and heads) converts
// its K by dimension and runs blocks of up to four queries that share each
// K and V load (attention_keys_avx2.h); one reached by fewer keeps K by key
// and runs one query at a time. Per query, the same operations in the same
// order as the scalar reference, so results are bit-identical to computing
// that query alone.
//
// scratch: attention_group_f16c.h's layout, the K tile by key (kt[key][d])
// or by dimension (kt[d][key]); keys past the last: 0.
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "model/attention.h"
#include "model/attention_exp.h"
#include "model/attention_group_f16c.h"
#include "model/attention_keys_avx2.h"
#include "model/attention_tiles.h"
#include "model/kv_prefetch.h"

namespace pg {
namespace {

constexpr int64_t kT = kAttentionTileKeys;
static_assert(kT % 8 == 0);

inline void ConvertRow(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t d = 0; d < n; d += 8)
    _mm256_storeu_ps(dst + d, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + d))));
}

// Scores of q against 8 consecutive f32 key rows k8[8][n]: lane l of each
// key's 8-lane accumulator sums d = l mod 8; the transpose by hadd gives key
// i the reduction ((l0+l1)+(l2+l3)) + ((l4+l5)+(l6+l7)), as in the scalar dot.
inline __m256 Dot8Keys(const float* q, const float* k8, int64_t n) {
  __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
  for (int64_t d = 0; d < n; d += 8) {
    const __m256 qv = _mm256_loadu_ps(q + d);
    c0 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k8 + 0 * n + d), c0);
    c1 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k8 + 1 * n + d), c1);
    c2 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k8 + 2 * n + d), c2);
    c3 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k8 + 3 * n + d), c3);
    c4 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k8 + 4 * n + d), c4);
    c5 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k8 + 5 * n + d), c5);
    c6 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k8 + 6 * n + d), c6);
    c7 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k8 + 7 * n + d), c7);
  }
  // hadd(a, b) = [a0+a1, a2+a3, b0+b1, b2+b3 | a4+a5, a6+a7, b4+b5, b6+b7]
  const __m256 h0123 = _mm256_hadd_ps(_mm256_hadd_ps(c0, c1), _mm256_hadd_ps(c2, c3));
  const __m256 h4567 = _mm256_hadd_ps(_mm256_hadd_ps(c4, c5), _mm256_hadd_ps(c6, c7));
  // low halves: (l0+l1)+(l2+l3) of keys 0-3 / 4-7; high halves: (l4+l5)+(l6+l7).
  const __m256 lo = _mm256_permute2f128_ps(h0123, h4567, 0x20);
  const __m256 hi = _mm256_permute2f128_ps(h0123, h4567, 0x31);
  return _mm256_add_ps(lo, hi);
}

// One tile's update of one query's (acc, m, s) state; keys [0, nt) of the tile.
void TileUpdate(const float* q, const float* kt, const float* vt, int64_t hd, int64_t nt, float scale, float* acc,
                float* m_state, float* s_state) {
  alignas(32) float s[kT], p[kT];
  const __m256 vscale = _mm256_set1_ps(scale);
  const int64_t nb = (nt + 7) / 8;
  for (int64_t b = 0; b < nb; ++b) _mm256_store_ps(s + 8 * b, _mm256_mul_ps(Dot8Keys(q, kt + 8 * b * hd, hd), vscale));
  for (int64_t i = 8 * nb; i < kT; ++i) s[i] = -INFINITY;  // TileSoftmax reads (and masks) all 32
  const float alpha = TileSoftmax(s, p, nt, m_state, s_state);
  const __m256 va = _mm256_set1_ps(alpha);
  const bool rescale = alpha != 1.0f;
  // 64 dims (8 registers) at a time, then 8 at a time; each dim sums keys in order.
  int64_t d0 = 0;
  for (; d0 + 64 <= hd; d0 += 64) {
    float* ac = acc + d0;
    __m256 r0 = _mm256_loadu_ps(ac), r1 = _mm256_loadu_ps(ac + 8), r2 = _mm256_loadu_ps(ac + 16),
           r3 = _mm256_loadu_ps(ac + 24), r4 = _mm256_loadu_ps(ac + 32), r5 = _mm256_loadu_ps(ac + 40),
           r6 = _mm256_loadu_ps(ac + 48), r7 = _mm256_loadu_ps(ac + 56);
    if (rescale) {
      r0 = _mm256_mul_ps(r0, va), r1 = _mm256_mul_ps(r1, va), r2 = _mm256_mul_ps(r2, va), r3 = _mm256_mul_ps(r3, va);
      r4 = _mm256_mul_ps(r4, va), r5 = _mm256_mul_ps(r5, va), r6 = _mm256_mul_ps(r6, va), r7 = _mm256_mul_ps(r7, va);
    }
    const float* v = vt + d0;
    for (int64_t i = 0; i < nt; ++i, v += hd) {
      const __m256 pb = _mm256_broadcast_ss(p + i);
      r0 = _mm256_fmadd_ps(pb, _mm256_loadu_ps(v), r0);
      r1 = _mm256_fmadd_ps(pb, _mm256_loadu_ps(v + 8), r1);
      r2 = _mm256_fmadd_ps(pb, _mm256_loadu_ps(v + 16), r2);
      r3 = _mm256_fmadd_ps(pb, _mm256_loadu_ps(v + 24), r3);
      r4 = _mm256_fmadd_ps(pb, _mm256_loadu_ps(v + 32), r4);
      r5 = _mm256_fmadd_ps(pb, _mm256_loadu_ps(v + 40), r5);
      r6 = _mm256_fmadd_ps(pb, _mm256_loadu_ps(v + 48), r6);
      r7 = _mm256_fmadd_ps(pb, _mm256_loadu_ps(v + 56), r7);
    }
    _mm256_storeu_ps(ac, r0), _mm256_storeu_ps(ac + 8, r1), _mm256_storeu_ps(ac + 16, r2);
    _mm256_storeu_ps(ac + 24, r3), _mm256_storeu_ps(ac + 32, r4), _mm256_storeu_ps(ac + 40, r5);
    _mm256_storeu_ps(ac + 48, r6), _mm256_storeu_ps(ac + 56, r7);
  }
  for (; d0 < hd; d0 += 8) {
    __m256 r = _mm256_loadu_ps(acc + d0);
    if (rescale) r = _mm256_mul_ps(r, va);
    for (int64_t i = 0; i < nt; ++i) r = _mm256_fmadd_ps(_mm256_broadcast_ss(p + i), _mm256_loadu_ps(vt + i * hd + d0), r);
    _mm256_storeu_ps(acc + d0, r);
  }
}

// ---- many queries per tile (prefill): K by dimension, blocks of queries ----

constexpr int kBlockQueries = 4;  // queries sharing each K/V load
// Tiles reached by at most this many queries take the one-query-at-a-time
// path above, K by key: a decode row's 8 heads, whose K/V come from DRAM.
// attention_bench, 2,900 keys, 8 queries: by dimension is 5.6 against 6.1
// ns per (query, key) with K/V in cache, but 15.0 against 13.0 from DRAM
// (--cold 64 --layers 8 --kv-heads 2); at 32 queries (a prefill task) 4.2
// against 4.9 in cache, where a prefill finds its K/V.
constexpr int64_t kRowMaxQueries = 8;

using Group = TiledGroup;

// The V update of NQ queries on dims [d0, d0 + 8 R): acc = acc * alpha (when
// alpha != 1), then acc = fma(p_i, v_i, acc) for keys i < nt[j] in order.
// Keys below nt_min are shared by all NQ queries; each query's own tail
// follows.
template <int NQ, int R>
[[gnu::always_inline]] inline void PvBlock(float* const* acc, const float (*p)[kT], const float* alpha,
                                           const int64_t* nt, int64_t nt_min, const float* vt, int64_t hd,
                                           int64_t d0) {
  __m256 r[NQ][R];
  for (int j = 0; j < NQ; ++j) {
    for (int x = 0; x < R; ++x) r[j][x] = _mm256_loadu_ps(acc[j] + d0 + 8 * x);
    if (alpha[j] != 1.0f) {
      const __m256 va = _mm256_set1_ps(alpha[j]);
      for (int x = 0; x < R; ++x) r[j][x] = _mm256_mul_ps(r[j][x], va);
    }
  }
  const float* v = vt + d0;
  for (int64_t i = 0; i < nt_min; ++i, v += hd) {
    __m256 vv[R];
    for (int x = 0; x < R; ++x) vv[x] = _mm256_loadu_ps(v + 8 * x);
    for (int j = 0; j < NQ; ++j) {
      const __m256 pb = _mm256_broadcast_ss(p[j] + i);
      for (int x = 0; x < R; ++x) r[j][x] = _mm256_fmadd_ps(pb, vv[x], r[j][x]);
    }
  }
#pragma GCC unroll 8  // r stays in registers only if j is a constant
  for (int j = 0; j < NQ; ++j)
    for (int64_t i = nt_min; i < nt[j]; ++i) {
      const __m256 pb = _mm256_broadcast_ss(p[j] + i);
      for (int x = 0; x < R; ++x) r[j][x] = _mm256_fmadd_ps(pb, _mm256_loadu_ps(vt + i * hd + d0 + 8 * x), r[j][x]);
    }
  for (int j = 0; j < NQ; ++j)
    for (int x = 0; x < R; ++x) _mm256_storeu_ps(acc[j] + d0 + 8 * x, r[j][x]);
}

// One tile's update of the NQ queries idx[0, NQ), whose keys in this tile
// are [0, nt[j]) (each >= 1); kt by dimension, vt by key.
template <int NQ>  // 3 or 4
void TileBlock(const Group& g, const float* kt, const float* vt, const int64_t* idx, const int64_t* nt) {
  alignas(32) float sc[NQ][kT], p[NQ][kT];
  const float* q[NQ];
  float* acc[NQ];
  float alpha[NQ];
  int64_t nt_min = kT;
  for (int j = 0; j < NQ; ++j) {
    q[j] = g.qr + idx[j] * g.hd;
    acc[j] = g.acc + idx[j] * g.hd;
    nt_min = std::min(nt_min, nt[j]);
  }
  DotBlockByDim<NQ>(q, kt, g.hd / 8, g.scale, sc);
  for (int j = 0; j < NQ; ++j) alpha[j] = TileSoftmax(sc[j], p[j], nt[j], &g.ms[idx[j]], &g.ss[idx[j]]);
  constexpr int R = 2;  // NQ x R <= 8 accumulators
  int64_t d0 = 0;
  for (; d0 + 8 * R <= g.hd; d0 += 8 * R) PvBlock<NQ, R>(acc, p, alpha, nt, nt_min, vt, g.hd, d0);
  for (; d0 < g.hd; d0 += 8) PvBlock<NQ, 1>(acc, p, alpha, nt, nt_min, vt, g.hd, d0);
}

// A block of n = 3 or 4 queries: ForEachQueryBlock splits n_active >= 9
// into ceil(n_active / 4) blocks of even size, at least three each.
static_assert(kBlockQueries == 4 && kRowMaxQueries >= 8);
void RunBlock(const Group& g, const float* kt, const float* vt, const int64_t* idx, const int64_t* nt, int n) {
  if (n == 3) return TileBlock<3>(g, kt, vt, idx, nt);
  TileBlock<4>(g, kt, vt, idx, nt);
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
    const int64_t n_active = std::count_if(queries.begin(), queries.end(), [&](const AttentionQuery& query) {
      return query.n_keys > j0;
    });
    // The one-query path spreads the prefetch of the tile ahead over its
    // queries' updates (kv_prefetch.h); the first tiles go at once.
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
    const int64_t nt_pad = (nt_max + 7) & ~int64_t{7};
    for (int64_t i = 0; i < nt_pad; ++i) ConvertRow(k_rows[i], kt + i * HD, HD);
    for (int64_t i = 0; i < nt_max; ++i) ConvertRow(v_rows[i], vt + i * HD, HD);
    int64_t part = 0;
    for (size_t qi = 0; qi < queries.size(); ++qi) {
      const AttentionQuery& query = queries[qi];
      if (query.n_keys <= j0) continue;
      if (j0 > 0) PrefetchTilesAhead(a, j0, n_max, part++, n_active);
      const int64_t nt = std::min(kT, query.n_keys - j0);
      TileUpdate(g.qr + qi * HD, kt, vt, HD, nt, a.scale, g.acc + qi * HD, &g.ms[qi], &g.ss[qi]);
    }
  }
  WriteTiledOutputs(queries, g);
}

}  // namespace pg
