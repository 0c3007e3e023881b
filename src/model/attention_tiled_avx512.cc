// AVX-512 version of AttendGroupScalar. Up to kBlockQueries queries are
// processed together, so that one load of K (or V) feeds the FMAs of all of
// them. A tile reached by more than kDirectMaxQueries queries (prefill) is
// converted to f32 once and shared by every block, its K with the keys along
// the vector lanes (attention_keys_avx512.h); a tile reached by fewer
// (decode) is read straight from the f16 rows and converted in registers,
// a zmm holding two keys' 8 dot lanes (the key-pair layout below).
// Per query, every operation and its order are those of the scalar
// reference, so the results are bit-identical to computing that query alone.
//
// scratch: attention_group_f16c.h's layout (the AVX2 kernel's), K tile
// by dimension (keys along the lanes).
//
// Key-pair layout of the f16 path: keys in groups of 8 (g), dims in chunks
// of 8 (c = d / 8); for r = 0..3, one 16-float register holds key 8g+r's
// chunk and key 8g+r+4's:
//
//   K(g, c, r) = [ k(8g+r)[8c .. 8c+8) | k(8g+r+4)[8c .. 8c+8) ]
//
// so a zmm FMA with q's chunk broadcast to both halves advances the 8 dot
// lanes of two keys, and the transpose of the four accumulators of a group
// yields the 8 dots in key order. Keys past the tile's last (to a multiple of
// 8) read a zero row.
//
// GCC 12's AVX-512 intrinsics (the _mm512_undefined_* inside them) raise
// false -W(maybe-)uninitialized warnings when inlined; silence them here.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <type_traits>

#include "model/attention.h"
#include "model/attention_exp.h"
#include "model/attention_group_f16c.h"
#include "model/attention_keys_avx512.h"
#include "model/attention_tiles.h"
#include "model/kv_prefetch.h"

namespace pg {
namespace {

constexpr int64_t kT = kAttentionTileKeys;
constexpr int kBlockQueries = 4;  // queries sharing each K/V load
// Tiles reached by at most this many queries are read straight from f16.
constexpr int64_t kDirectMaxQueries = 8;
static_assert(kT % 8 == 0);

// f16 row -> f32, 16 at a time (n a multiple of 8).
void ConvertRow(const uint16_t* src, float* dst, int64_t n) {
  int64_t d = 0;
  for (; d + 16 <= n; d += 16)
    _mm512_storeu_ps(dst + d, _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + d))));
  if (d < n) _mm256_storeu_ps(dst + d, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + d))));
}

// _mm256_hadd_ps on each 256-bit half: [a0+a1, a2+a3, b0+b1, b2+b3] per 128-bit lane.
inline __m512 Hadd(__m512 a, __m512 b) {
  return _mm512_add_ps(_mm512_shuffle_ps(a, b, _MM_SHUFFLE(2, 0, 2, 0)),
                       _mm512_shuffle_ps(a, b, _MM_SHUFFLE(3, 1, 3, 1)));
}

// The 8 dots of a key group from z[r] = [key r's 8 lanes | key r+4's], each
// reduced as ((l0+l1)+(l2+l3)) + ((l4+l5)+(l6+l7)).
inline __m256 ReduceGroup(__m512 z0, __m512 z1, __m512 z2, __m512 z3) {
  // 128-bit lanes of h: [keys 0-3: (l0+l1)+(l2+l3) | keys 0-3: (l4+l5)+(l6+l7) | keys 4-7: .. | keys 4-7: ..]
  const __m512 h = Hadd(Hadd(z0, z1), Hadd(z2, z3));
  const __m512 lo = _mm512_shuffle_f32x4(h, h, _MM_SHUFFLE(2, 0, 2, 0));
  const __m512 hi = _mm512_shuffle_f32x4(h, h, _MM_SHUFFLE(3, 1, 3, 1));
  return _mm512_castps512_ps256(_mm512_add_ps(lo, hi));
}

// Where a block reads the tile's K and V (16 dims from d of key i, the upper
// 8 dropped when `masked` and tail == 0x00FF). Both give the same f32 values.
//   F32Tile: the tile converted once (several blocks of queries share it),
//            K by dimension (attention_keys_avx512.h).
//   F16Tile: straight from the f16 rows (few blocks: no store and reload),
//            K in the key-pair layout.
struct F32Tile {
  const float* kt;  // [hd][kT]
  const float* vt;  // [kT][hd]
  int64_t hd;
  __m512 V(int64_t i, int64_t d, bool masked, __mmask16 tail) const {
    const float* src = vt + i * hd + d;
    return masked ? _mm512_maskz_loadu_ps(tail, src) : _mm512_loadu_ps(src);
  }
};

struct F16Tile {
  const uint16_t* const* k_rows;  // [kT] (K rows past the last key: zeros)
  const uint16_t* const* v_rows;  // [kT]
  __m512 K(int64_t g, int64_t c, int r) const {
    const __m128i lo = _mm_loadu_si128(reinterpret_cast<const __m128i*>(k_rows[8 * g + r] + 8 * c));
    const __m128i hi = _mm_loadu_si128(reinterpret_cast<const __m128i*>(k_rows[8 * g + r + 4] + 8 * c));
    return _mm512_cvtph_ps(_mm256_inserti128_si256(_mm256_castsi128_si256(lo), hi, 1));
  }
  __m512 V(int64_t i, int64_t d, bool masked, __mmask16 tail) const {
    const uint16_t* src = v_rows[i] + d;
    return _mm512_cvtph_ps(masked ? _mm256_maskz_loadu_epi16(tail, src)
                                  : _mm256_loadu_si256(reinterpret_cast<const __m256i*>(src)));
  }
};

// s[j][0, 8 * n_groups) = scale * dot(q[j], key) for NQ queries.
template <int NQ>
void DotBlock(const float* const* q, const F16Tile& tile, int64_t C, int64_t n_groups, float scale, float (*s)[kT]) {
  const __m256 vscale = _mm256_set1_ps(scale);
  for (int64_t g = 0; g < n_groups; ++g) {
    __m512 acc[NQ][4];
    for (int j = 0; j < NQ; ++j)
      for (int r = 0; r < 4; ++r) acc[j][r] = _mm512_setzero_ps();
    for (int64_t c = 0; c < C; ++c) {
      const __m512 k0 = tile.K(g, c, 0), k1 = tile.K(g, c, 1), k2 = tile.K(g, c, 2), k3 = tile.K(g, c, 3);
      for (int j = 0; j < NQ; ++j) {
        const __m512 qb = _mm512_broadcast_f32x8(_mm256_loadu_ps(q[j] + 8 * c));
        acc[j][0] = _mm512_fmadd_ps(qb, k0, acc[j][0]);
        acc[j][1] = _mm512_fmadd_ps(qb, k1, acc[j][1]);
        acc[j][2] = _mm512_fmadd_ps(qb, k2, acc[j][2]);
        acc[j][3] = _mm512_fmadd_ps(qb, k3, acc[j][3]);
      }
    }
    for (int j = 0; j < NQ; ++j)
      _mm256_storeu_ps(s[j] + 8 * g, _mm256_mul_ps(ReduceGroup(acc[j][0], acc[j][1], acc[j][2], acc[j][3]), vscale));
  }
}

// ((l0+l1)+(l2+l3)) + ((l4+l5)+(l6+l7)) of the 8 lanes of x.
inline float Reduce8(__m256 x) {
  const __m256 h = _mm256_hadd_ps(x, x);   // [l0+l1, l2+l3, .., .. | l4+l5, l6+l7, .., ..]
  const __m256 h2 = _mm256_hadd_ps(h, h);  // [(l0+l1)+(l2+l3), .. | (l4+l5)+(l6+l7), ..]
  return _mm_cvtss_f32(_mm_add_ss(_mm256_castps256_ps128(h2), _mm256_extractf128_ps(h2, 1)));
}

// One query's softmax step for a tile with scores s[0, nt): the weights p,
// and the new running max and sum. Returns alpha = ExpF32(M_old - M_new).
[[gnu::always_inline]] inline float TileSoftmax(const float* s, float* p, int64_t nt, float* m_state, float* s_state) {
  // Scores past nt are -inf (p = 0), as in the scalar reference.
  const __m512 ninf = _mm512_set1_ps(-INFINITY);
  const __mmask32 valid = nt >= kT ? ~__mmask32{0} : (__mmask32{1} << nt) - 1;
  const __m512 s0 = _mm512_mask_loadu_ps(ninf, static_cast<__mmask16>(valid), s);
  const __m512 s1 = _mm512_mask_loadu_ps(ninf, static_cast<__mmask16>(valid >> 16), s + 16);
  // max_ps(s, m) keeps m when s is NaN, as the scalar compare skips it; the
  // max of the other scores does not depend on the order it is taken in.
  const float m = _mm512_reduce_max_ps(_mm512_max_ps(s1, _mm512_max_ps(s0, ninf)));
  const float M = *m_state;
  const float m_new = m > M ? m : M;
  const float dm = M - m_new;
  const float alpha = dm == 0.0f ? 1.0f : ExpF32(dm);  // ExpF32(+-0) is exactly 1
  const __m512 vmn = _mm512_set1_ps(m_new);
  const __m512 p0 = ExpF32x16(_mm512_sub_ps(s0, vmn)), p1 = ExpF32x16(_mm512_sub_ps(s1, vmn));
  _mm512_storeu_ps(p, p0);
  _mm512_storeu_ps(p + 16, p1);
  // Lane l = ((p_l + p_{8+l}) + p_{16+l}) + p_{24+l}, the scalar order.
  __m256 sum = _mm256_add_ps(_mm512_castps512_ps256(p0), _mm512_extractf32x8_ps(p0, 1));
  sum = _mm256_add_ps(sum, _mm512_castps512_ps256(p1));
  sum = _mm256_add_ps(sum, _mm512_extractf32x8_ps(p1, 1));
  *s_state = std::fma(*s_state, alpha, Reduce8(sum));
  *m_state = m_new;
  return alpha;
}

// The V update of NQ queries on dims [d0, d0 + 16 R) (the last register
// masked by `tail` when kMasked): acc = acc * alpha (when alpha != 1), then
// acc = fma(p_i, v_i, acc) for keys i < nt[j] in order. Keys below nt_min
// are shared by all NQ queries; each query's own tail follows.
template <int NQ, int R, bool kMasked, typename Tile>
void PvBlock(float* const* acc, const float (*p)[kT], const float* alpha, const int64_t* nt, int64_t nt_min,
             const Tile& tile, int64_t d0, __mmask16 tail) {
  __m512 r[NQ][R];
  for (int j = 0; j < NQ; ++j) {
    for (int x = 0; x < R; ++x) {
      const float* src = acc[j] + d0 + 16 * x;
      r[j][x] = kMasked && x == R - 1 ? _mm512_maskz_loadu_ps(tail, src) : _mm512_loadu_ps(src);
    }
    if (alpha[j] != 1.0f) {
      const __m512 va = _mm512_set1_ps(alpha[j]);
      for (int x = 0; x < R; ++x) r[j][x] = _mm512_mul_ps(r[j][x], va);
    }
  }
  for (int64_t i = 0; i < nt_min; ++i) {
    __m512 vv[R];
    for (int x = 0; x < R; ++x) vv[x] = tile.V(i, d0 + 16 * x, kMasked && x == R - 1, tail);
    for (int j = 0; j < NQ; ++j) {
      const __m512 pb = _mm512_set1_ps(p[j][i]);
      for (int x = 0; x < R; ++x) r[j][x] = _mm512_fmadd_ps(pb, vv[x], r[j][x]);
    }
  }
  for (int j = 0; j < NQ; ++j)
    for (int64_t i = nt_min; i < nt[j]; ++i) {
      const __m512 pb = _mm512_set1_ps(p[j][i]);
      for (int x = 0; x < R; ++x)
        r[j][x] = _mm512_fmadd_ps(pb, tile.V(i, d0 + 16 * x, kMasked && x == R - 1, tail), r[j][x]);
    }
  for (int j = 0; j < NQ; ++j)
    for (int x = 0; x < R; ++x) {
      if (kMasked && x == R - 1)
        _mm512_mask_storeu_ps(acc[j] + d0 + 16 * x, tail, r[j][x]);
      else
        _mm512_storeu_ps(acc[j] + d0 + 16 * x, r[j][x]);
    }
}

using Group = TiledGroup;

// One tile's update of the NQ queries idx[0, NQ), whose keys in this tile
// are [0, nt[j]) (each >= 1).
template <int NQ, typename Tile>
void TileBlock(const Group& g, const Tile& tile, const int64_t* idx, const int64_t* nt) {
  alignas(64) float p[NQ][kT];
  const float* q[NQ];
  float* acc[NQ];
  float alpha[NQ];
  int64_t nt_min = kT, nt_max = 0;
  for (int j = 0; j < NQ; ++j) {
    q[j] = g.qr + idx[j] * g.hd;
    acc[j] = g.acc + idx[j] * g.hd;
    nt_min = std::min(nt_min, nt[j]);
    nt_max = std::max(nt_max, nt[j]);
  }
  if constexpr (std::is_same_v<Tile, F32Tile>) {
    __m512 sc[NQ][2];
    float* ms[NQ];
    float* ss[NQ];
    for (int j = 0; j < NQ; ++j) {
      ms[j] = &g.ms[idx[j]];
      ss[j] = &g.ss[idx[j]];
    }
    DotBlockByDim<NQ>(q, tile.kt, g.hd / 8, g.scale, sc);
    BlockSoftmax<NQ>(sc, nt, ms, ss, p, alpha);
  } else {
    alignas(64) float s[NQ][kT];
    DotBlock<NQ>(q, tile, g.hd / 8, (nt_max + 7) / 8, g.scale, s);
    for (int j = 0; j < NQ; ++j) alpha[j] = TileSoftmax(s[j], p[j], nt[j], &g.ms[idx[j]], &g.ss[idx[j]]);
  }
  int64_t d0 = 0;
  for (; d0 + 64 <= g.hd; d0 += 64) PvBlock<NQ, 4, false>(acc, p, alpha, nt, nt_min, tile, d0, 0xFFFF);
  for (; d0 < g.hd; d0 += 16) {
    const __mmask16 tail = g.hd - d0 >= 16 ? 0xFFFF : 0x00FF;
    PvBlock<NQ, 1, true>(acc, p, alpha, nt, nt_min, tile, d0, tail);
  }
}

template <typename Tile>
void RunBlock(const Group& g, const Tile& tile, const int64_t* idx, const int64_t* nt, int n) {
  switch (n) {
    case 1: return TileBlock<1>(g, tile, idx, nt);
    case 2: return TileBlock<2>(g, tile, idx, nt);
    case 3: return TileBlock<3>(g, tile, idx, nt);
    default: return TileBlock<4>(g, tile, idx, nt);
  }
}

template <typename Tile>
void RunTile(const Group& g, const Tile& tile, std::span<const AttentionQuery> queries, int64_t j0, int64_t n_active) {
  ForEachQueryBlock<kBlockQueries>(
      queries, j0, n_active, [&](const int64_t* idx, const int64_t* nt, int n) { RunBlock(g, tile, idx, nt, n); });
}

}  // namespace

void AttendGroupAvx512(const AttentionArgs& a, std::span<const AttentionQuery> queries, float* scratch) {
  const int64_t HD = a.head_dim;  // multiple of 8, <= 512
  const TiledScratch st = StartTiledGroup(a, queries, scratch);
  const Group& g = st.g;
  float* kt = st.kt;
  float* vt = st.vt;
  int64_t n_max = 0;
  for (const AttentionQuery& query : queries) n_max = std::max(n_max, query.n_keys);
  const uint16_t* k_rows[kT];
  const uint16_t* v_rows[kT];
  const F32Tile f32_tile{kt, vt, HD};
  const F16Tile f16_tile{k_rows, v_rows};
  for (int64_t j0 = 0; j0 < n_max; j0 += kT) {
    const int64_t nt_max = std::min(kT, n_max - j0);
    const int64_t nt_pad = (nt_max + 7) & ~int64_t{7};
    TileRows(a, j0, nt_max, nt_pad, k_rows, v_rows);
    PrefetchTilesAhead(a, j0, n_max);
    const int64_t n_active =
        std::count_if(queries.begin(), queries.end(), [&](const AttentionQuery& query) { return query.n_keys > j0; });
    if (n_active <= kDirectMaxQueries) {
      RunTile(g, f16_tile, queries, j0, n_active);
      continue;
    }
    std::fill(k_rows + nt_pad, k_rows + kT, kZeroKeyRow);
    ConvertKTileByDim(k_rows, HD, kt);
    for (int64_t i = 0; i < nt_max; ++i) ConvertRow(v_rows[i], vt + i * HD, HD);
    RunTile(g, f32_tile, queries, j0, n_active);
  }
  WriteTiledOutputs(queries, g);
}

}  // namespace pg
