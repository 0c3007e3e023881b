// Private to attention_tiled_avx512.cc: the dot products of a tile reached by
// many queries (prefill), with the tile's keys along the vector lanes.
//
// The K tile is converted once into kt[d][kAttentionTileKeys] (f32, one row
// of 32 keys per head dimension; keys past the tile's last read zero rows).
// The dot of a query with a key is the reference's 8 lanes (lane l sums
// d = l mod 8 in increasing d with fmas, attention.h): here lane l of 32 keys
// is two zmm accumulators fed by the query's element broadcast against the
// tile rows d = l, l + 8, ..., so the 8 lanes come out as separate registers
// and their ((l0+l1)+(l2+l3)) + ((l4+l5)+(l6+l7)) reduction is vertical adds
// of 32 keys at a time: no shuffles per key, the same arithmetic per
// (query, key) as the scalar reference. The scores stay in registers for
// BlockSoftmax, the softmax step of a block's queries side by side (the
// decode path's TileSoftmax takes one query's scores from memory).
//
// Internal linkage on purpose, like attention_exp.h: only the AVX-512
// translation unit includes it.
#pragma once

#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "backend/cpu/fp16.h"
#include "model/attention.h"
#include "model/attention_exp.h"

namespace pg {
namespace {

constexpr int64_t kKeysT = kAttentionTileKeys;
static_assert(kKeysT == 32, "two zmm registers of keys per tile row");

// r[0..16) (16 rows of 16 floats) transposed in place.
inline void Transpose16(__m512* r) {
  __m512 t[16], u[16];
  for (int i = 0; i < 16; i += 2) {
    t[i] = _mm512_unpacklo_ps(r[i], r[i + 1]);      // per 128 bits: a0 b0 a1 b1
    t[i + 1] = _mm512_unpackhi_ps(r[i], r[i + 1]);  // a2 b2 a3 b3
  }
  for (int i = 0; i < 16; i += 4) {
    u[i] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));      // a0 b0 c0 d0
    u[i + 1] = _mm512_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));  // a1 b1 c1 d1
    u[i + 2] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[i + 3] = _mm512_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  // u[4g + m], 128-bit lane k: column 4k + m of rows 4g .. 4g + 3.
  for (int m = 0; m < 4; ++m) {
    const __m512 v0 = _mm512_shuffle_f32x4(u[m], u[4 + m], 0x88);  // lanes 0, 2 of each
    const __m512 v1 = _mm512_shuffle_f32x4(u[m], u[4 + m], 0xDD);  // lanes 1, 3
    const __m512 v2 = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], 0x88);
    const __m512 v3 = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], 0xDD);
    r[m] = _mm512_shuffle_f32x4(v0, v2, 0x88);
    r[8 + m] = _mm512_shuffle_f32x4(v0, v2, 0xDD);
    r[4 + m] = _mm512_shuffle_f32x4(v1, v3, 0x88);
    r[12 + m] = _mm512_shuffle_f32x4(v1, v3, 0xDD);
  }
}

// The tile's K rows (all kKeysT of them, rows past the last key pointing at
// zeros) into kt[d][kKeysT], f32. hd is a multiple of 8.
inline void ConvertKTileByDim(const uint16_t* const* rows, int64_t hd, float* kt) {
  for (int64_t b = 0; b < kKeysT; b += 16) {
    int64_t e = 0;
    for (; e + 16 <= hd; e += 16) {
      __m512 r[16];
      for (int i = 0; i < 16; ++i)
        r[i] = _mm512_cvtph_ps(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(rows[b + i] + e)));
      Transpose16(r);
      for (int d = 0; d < 16; ++d) _mm512_storeu_ps(kt + (e + d) * kKeysT + b, r[d]);
    }
    for (; e < hd; ++e)  // the last 8 dims when hd % 16 == 8
      for (int i = 0; i < 16; ++i) kt[e * kKeysT + b + i] = F16ToF32(rows[b + i][e]);
  }
}

// Lane l of the dots of NQ queries with the tile's 32 keys: a[j][0] keys
// 0-15, a[j][1] keys 16-31, each fma'd over d = l, l + 8, ... in order.
template <int NQ>
[[gnu::always_inline]] inline void DotLane(const float* const* q, const float* kt, int64_t C, int l, __m512 (*a)[2]) {
  for (int j = 0; j < NQ; ++j) a[j][0] = a[j][1] = _mm512_setzero_ps();
  for (int64_t c = 0; c < C; ++c) {
    const float* row = kt + (8 * c + l) * kKeysT;
    const __m512 k0 = _mm512_loadu_ps(row), k1 = _mm512_loadu_ps(row + 16);
    for (int j = 0; j < NQ; ++j) {
      const __m512 qb = _mm512_set1_ps(q[j][8 * c + l]);
      a[j][0] = _mm512_fmadd_ps(qb, k0, a[j][0]);
      a[j][1] = _mm512_fmadd_ps(qb, k1, a[j][1]);
    }
  }
}

// x[j][h] += y[j][h]
template <int NQ>
[[gnu::always_inline]] inline void AddLanes(__m512 (*x)[2], const __m512 (*y)[2]) {
  for (int j = 0; j < NQ; ++j)
    for (int h = 0; h < 2; ++h) x[j][h] = _mm512_add_ps(x[j][h], y[j][h]);
}

// sc[j][h] = scale * dot(q[j], key) for NQ queries and the tile's 32 keys
// (h = 0: keys 0-15, h = 1: keys 16-31), C = hd / 8.
template <int NQ>
[[gnu::always_inline]] inline void DotBlockByDim(const float* const* q, const float* kt, int64_t C, float scale,
                                                 __m512 (*sc)[2]) {
  __m512 x[NQ][2], y[NQ][2], hi[NQ][2];
  DotLane<NQ>(q, kt, C, 0, sc);
  DotLane<NQ>(q, kt, C, 1, y);
  AddLanes<NQ>(sc, y);  // l0 + l1
  DotLane<NQ>(q, kt, C, 2, x);
  DotLane<NQ>(q, kt, C, 3, y);
  AddLanes<NQ>(x, y);
  AddLanes<NQ>(sc, x);  // (l0+l1) + (l2+l3)
  DotLane<NQ>(q, kt, C, 4, hi);
  DotLane<NQ>(q, kt, C, 5, y);
  AddLanes<NQ>(hi, y);
  DotLane<NQ>(q, kt, C, 6, x);
  DotLane<NQ>(q, kt, C, 7, y);
  AddLanes<NQ>(x, y);
  AddLanes<NQ>(hi, x);  // (l4+l5) + (l6+l7)
  AddLanes<NQ>(sc, hi);
  const __m512 vscale = _mm512_set1_ps(scale);
  for (int j = 0; j < NQ; ++j)
    for (int h = 0; h < 2; ++h) sc[j][h] = _mm512_mul_ps(sc[j][h], vscale);
}

// ((l0+l1)+(l2+l3)) + ((l4+l5)+(l6+l7)) of each of x[0..4), in lanes 0..3.
inline __m128 Reduce8x4(const __m256* x) {
  const __m256 h = _mm256_hadd_ps(_mm256_hadd_ps(x[0], x[1]), _mm256_hadd_ps(x[2], x[3]));
  // h = [x0: (l0+l1)+(l2+l3), x1: .., x2: .., x3: .. | x0: (l4+l5)+(l6+l7), x1: .., ..]
  return _mm_add_ps(_mm256_castps256_ps128(h), _mm256_extractf128_ps(h, 1));
}

// The softmax step of NQ queries over the tile, their scores sc[j] (keys
// [0, nt[j]) valid, the rest taken as -inf), as the scalar reference takes
// it: the weights into p[j], the running max and sum updated, alpha[j] =
// ExpF32(M_old - M_new). The queries' chains are independent, so they are
// written side by side, and the four lane sums reduce together.
template <int NQ>
[[gnu::always_inline]] inline void BlockSoftmax(__m512 (*sc)[2], const int64_t* nt, float* const* m_state,
                                                float* const* s_state, float (*p)[kKeysT], float* alpha) {
  const __m512 ninf = _mm512_set1_ps(-INFINITY);
  float m[NQ];
  for (int j = 0; j < NQ; ++j) {
    const __mmask32 valid = nt[j] >= kKeysT ? ~__mmask32{0} : (__mmask32{1} << nt[j]) - 1;
    sc[j][0] = _mm512_mask_mov_ps(ninf, static_cast<__mmask16>(valid), sc[j][0]);
    sc[j][1] = _mm512_mask_mov_ps(ninf, static_cast<__mmask16>(valid >> 16), sc[j][1]);
    // max_ps(s, m) keeps m when s is NaN, as the scalar compare skips it.
    m[j] = _mm512_reduce_max_ps(_mm512_max_ps(sc[j][1], _mm512_max_ps(sc[j][0], ninf)));
  }
  __m256 lanes[4] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
  for (int j = 0; j < NQ; ++j) {
    const float M = *m_state[j];
    const float m_new = m[j] > M ? m[j] : M;
    const float dm = M - m_new;
    alpha[j] = dm == 0.0f ? 1.0f : ExpF32(dm);  // ExpF32(+-0) is exactly 1
    *m_state[j] = m_new;
    const __m512 vmn = _mm512_set1_ps(m_new);
    const __m512 p0 = ExpF32x16(_mm512_sub_ps(sc[j][0], vmn)), p1 = ExpF32x16(_mm512_sub_ps(sc[j][1], vmn));
    _mm512_storeu_ps(p[j], p0);
    _mm512_storeu_ps(p[j] + 16, p1);
    // Lane l = ((p_l + p_{8+l}) + p_{16+l}) + p_{24+l}, the scalar order.
    __m256 sum = _mm256_add_ps(_mm512_castps512_ps256(p0), _mm512_extractf32x8_ps(p0, 1));
    sum = _mm256_add_ps(sum, _mm512_castps512_ps256(p1));
    lanes[j] = _mm256_add_ps(sum, _mm512_extractf32x8_ps(p1, 1));
  }
  alignas(16) float tile_sum[4];
  _mm_store_ps(tile_sum, Reduce8x4(lanes));
  for (int j = 0; j < NQ; ++j) *s_state[j] = std::fma(*s_state[j], alpha[j], tile_sum[j]);
}

}  // namespace
}  // namespace pg
