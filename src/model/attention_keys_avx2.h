// Private to attention_tiled_avx2.cc: the dot products of a tile reached by
// many queries (prefill), with the tile's keys along the vector lanes, in
// AVX2's sixteen registers; and the softmax step of one query over a tile,
// which both of that file's paths take.
//
// The K tile is converted once into kt[d][kAttentionTileKeys] (f32, one row
// of 32 keys per head dimension; keys past the tile's last read zero rows).
// The dot of a query with a key is the reference's 8 lanes (lane l sums
// d = l mod 8 in increasing d with fmas, attention.h). Here lane l of NQ
// queries and 8 KG keys is NQ x KG ymm accumulators fed by each query's
// element broadcast against the tile rows d = l, l + 8, ...: one load of a
// K row feeds NQ queries and one broadcast KG key groups (0.75 loads per FMA
// at NQ x KG = 4 x 2, against 1.125 for one query against rows of keys).
// The 8 lanes go to a small buffer and their ((l0+l1)+(l2+l3)) +
// ((l4+l5)+(l6+l7)) reduction is vertical adds of 8 keys at a time: no
// horizontal adds, the same arithmetic per (query, key) as the scalar
// reference.
//
// Internal linkage on purpose, like attention_exp.h: only the AVX2
// translation unit includes it.
#pragma once

#include <immintrin.h>

#include <cmath>
#include <cstdint>

#include "backend/cpu/simd_avx2.h"
#include "model/attention.h"
#include "model/attention_exp.h"

namespace pg {
namespace {

constexpr int64_t kKeysT = kAttentionTileKeys;
static_assert(kKeysT == 32, "four ymm registers of keys per tile row");

// r[0..8) (8 rows of 8 floats) transposed in place.
inline void Transpose8(__m256* r) {
  __m256 t[8], u[8];
  for (int i = 0; i < 8; i += 2) {
    t[i] = _mm256_unpacklo_ps(r[i], r[i + 1]);      // per 128 bits: a0 b0 a1 b1
    t[i + 1] = _mm256_unpackhi_ps(r[i], r[i + 1]);  // a2 b2 a3 b3
  }
  for (int i = 0; i < 8; i += 4) {
    u[i] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(1, 0, 1, 0));      // a0 b0 c0 d0
    u[i + 1] = _mm256_shuffle_ps(t[i], t[i + 2], _MM_SHUFFLE(3, 2, 3, 2));  // a1 b1 c1 d1
    u[i + 2] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[i + 3] = _mm256_shuffle_ps(t[i + 1], t[i + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  // u[m] (rows 0-3) and u[4 + m] (rows 4-7), 128-bit half h: column 4h + m.
  for (int m = 0; m < 4; ++m) {
    r[m] = _mm256_permute2f128_ps(u[m], u[4 + m], 0x20);
    r[4 + m] = _mm256_permute2f128_ps(u[m], u[4 + m], 0x31);
  }
}

// The tile's K rows (all kKeysT of them, rows past the last key pointing at
// zeros) into kt[d][kKeysT], f32. hd is a multiple of 8.
inline void ConvertKTileByDim(const uint16_t* const* rows, int64_t hd, float* kt) {
  for (int64_t b = 0; b < kKeysT; b += 8)
    for (int64_t e = 0; e < hd; e += 8) {
      __m256 r[8];
      for (int i = 0; i < 8; ++i) r[i] = avx2::LoadF16(rows[b + i] + e);
      Transpose8(r);
      for (int d = 0; d < 8; ++d) _mm256_storeu_ps(kt + (e + d) * kKeysT + b, r[d]);
    }
}

// Lane l of the dots of NQ queries with the KG key groups (8 keys each) of
// the tile from key k0: each fma'd over d = l, l + 8, ... in order, stored to
// lanes[l][j][k0 .. k0 + 8 KG).
template <int NQ, int KG>
[[gnu::always_inline]] inline void DotLane(const float* const* q, const float* kt, int64_t C, int l, int64_t k0,
                                           float (*lanes)[NQ][kKeysT]) {
  __m256 a[NQ][KG];
  for (int j = 0; j < NQ; ++j)
    for (int g = 0; g < KG; ++g) a[j][g] = _mm256_setzero_ps();
  for (int64_t c = 0; c < C; ++c) {
    const float* row = kt + (8 * c + l) * kKeysT + k0;
    __m256 k[KG];
    for (int g = 0; g < KG; ++g) k[g] = _mm256_loadu_ps(row + 8 * g);
    for (int j = 0; j < NQ; ++j) {
      const __m256 qb = _mm256_broadcast_ss(q[j] + 8 * c + l);
      for (int g = 0; g < KG; ++g) a[j][g] = _mm256_fmadd_ps(qb, k[g], a[j][g]);
    }
  }
  for (int j = 0; j < NQ; ++j)
    for (int g = 0; g < KG; ++g) _mm256_store_ps(lanes[l][j] + k0 + 8 * g, a[j][g]);
}

// sc[j][0, 32) = scale * dot(q[j], key) for NQ queries and the tile's 32
// keys, C = hd / 8.
template <int NQ>
[[gnu::always_inline]] inline void DotBlockByDim(const float* const* q, const float* kt, int64_t C, float scale,
                                                 float (*sc)[kKeysT]) {
  static_assert(NQ >= 3 && NQ <= 4, "a broadcast of q feeds 2 key groups; fewer queries need more");
  constexpr int KG = 2;  // NQ x KG <= 8 accumulators
  alignas(32) float lanes[8][NQ][kKeysT];
  for (int64_t k0 = 0; k0 < kKeysT; k0 += 8 * KG)
    for (int l = 0; l < 8; ++l) DotLane<NQ, KG>(q, kt, C, l, k0, lanes);
  const __m256 vscale = _mm256_set1_ps(scale);
  for (int j = 0; j < NQ; ++j)
    for (int64_t k = 0; k < kKeysT; k += 8) {
      __m256 x[8];
      for (int l = 0; l < 8; ++l) x[l] = _mm256_load_ps(lanes[l][j] + k);
      const __m256 lo = _mm256_add_ps(_mm256_add_ps(x[0], x[1]), _mm256_add_ps(x[2], x[3]));
      const __m256 hi = _mm256_add_ps(_mm256_add_ps(x[4], x[5]), _mm256_add_ps(x[6], x[7]));
      _mm256_store_ps(sc[j] + k, _mm256_mul_ps(_mm256_add_ps(lo, hi), vscale));
    }
}

// ((l0+l1)+(l2+l3)) + ((l4+l5)+(l6+l7)) of the 8 lanes of x.
inline float Reduce8(__m256 x) {
  const __m256 h = _mm256_hadd_ps(x, x);   // [l0+l1, l2+l3, .., .. | l4+l5, l6+l7, .., ..]
  const __m256 h2 = _mm256_hadd_ps(h, h);  // [(l0+l1)+(l2+l3), .. | (l4+l5)+(l6+l7), ..]
  return _mm_cvtss_f32(_mm_add_ss(_mm256_castps256_ps128(h2), _mm256_extractf128_ps(h2, 1)));
}

// The softmax step of one query over the tile, its scores s[0, 32) (keys
// [0, nt) valid, the rest taken as -inf), as the scalar reference takes it:
// the weights into p, the running max and sum updated. Returns alpha =
// ExpF32(M_old - M_new).
[[gnu::always_inline]] inline float TileSoftmax(const float* s, float* p, int64_t nt, float* m_state, float* s_state) {
  const __m256 ninf = _mm256_set1_ps(-INFINITY);
  __m256 x[4];
  __m256 vm = ninf;
  for (int b = 0; b < 4; ++b) {
    const __m256i idx = _mm256_add_epi32(_mm256_set1_epi32(8 * b), _mm256_setr_epi32(0, 1, 2, 3, 4, 5, 6, 7));
    const __m256 valid = _mm256_castsi256_ps(_mm256_cmpgt_epi32(_mm256_set1_epi32(static_cast<int>(nt)), idx));
    x[b] = _mm256_blendv_ps(ninf, _mm256_load_ps(s + 8 * b), valid);
    // max_ps(s, m) keeps m when s is NaN, as the scalar compare skips it; the
    // max of the other scores does not depend on the order it is taken in.
    vm = _mm256_max_ps(x[b], vm);
  }
  vm = _mm256_max_ps(vm, _mm256_permute2f128_ps(vm, vm, 0x01));
  vm = _mm256_max_ps(vm, _mm256_permute_ps(vm, _MM_SHUFFLE(1, 0, 3, 2)));
  vm = _mm256_max_ps(vm, _mm256_permute_ps(vm, _MM_SHUFFLE(2, 3, 0, 1)));
  const float m = _mm256_cvtss_f32(vm);
  const float M = *m_state;
  const float m_new = m > M ? m : M;
  const float dm = M - m_new;
  const float alpha = dm == 0.0f ? 1.0f : ExpF32(dm);  // ExpF32(+-0) is exactly 1
  const __m256 vmn = _mm256_set1_ps(m_new);
  __m256 sum = _mm256_setzero_ps();
  for (int b = 0; b < 4; ++b) {
    const __m256 pv = ExpF32x8(_mm256_sub_ps(x[b], vmn));
    _mm256_store_ps(p + 8 * b, pv);
    sum = _mm256_add_ps(sum, pv);  // lane l = ((p_l + p_{8+l}) + p_{16+l}) + p_{24+l}
  }
  *s_state = std::fma(*s_state, alpha, Reduce8(sum));
  *m_state = m_new;
  return alpha;
}

}  // namespace
}  // namespace pg
