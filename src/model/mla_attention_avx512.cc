// MlaAttendAvx512: MlaAttendScalar's operations tiled across heads and keys.
//
// Scores: the queries are packed in head pairs, chunk by chunk,
//
//   qp(pair, c) = [ q_{2 pair}[8c .. 8c+8) | q_{2 pair + 1}[8c .. 8c+8) ]   (16 floats)
//
// and a key row's chunk c is broadcast to both halves of a zmm, so one fma
// advances the 8 dot lanes of two heads; a block of up to 4 pairs x 4 keys
// keeps 16 accumulators in registers, and every row chunk loaded serves every
// head. Each accumulator half is reduced in DotLanes8's order,
// ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)), then the tail is fma'd on: the
// reference's dot, bit for bit.
//
// Weighted sum: a block of up to 4 heads x 64 outputs stays in registers over
// a tile of kMlaTileKeys widened rows, each fma o = fma(p_hj, c_j[d], o) in
// key order as FmaRow's. The softmax between them is MlaSoftmaxRows.
//
// GCC 12's AVX-512 intrinsics (the _mm512_undefined_* inside them) raise
// false -W(maybe-)uninitialized warnings when inlined; silence them here.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "model/mla_attention.h"

namespace pg {
namespace {

constexpr int kPairs = 4;  // head pairs per score block
constexpr int kKeys = 4;   // keys per score block
constexpr int kHeads = 4;  // heads per weighted-sum block
constexpr int kVecs = 4;   // 16-float vectors per weighted-sum block

// Lane 0: the sum of lanes 0-7 in DotLanes8's order; lane 8: of lanes 8-15.
inline __m512 ReduceHalves(__m512 v) {
  v = _mm512_add_ps(v, _mm512_permute_ps(v, 0xB1));           // l0+l1, l2+l3, ...
  v = _mm512_add_ps(v, _mm512_permute_ps(v, 0x4E));           // (l0+l1)+(l2+l3), (l4+l5)+(l6+l7)
  return _mm512_add_ps(v, _mm512_shuffle_f32x4(v, v, 0xB1));  // + the other 128-bit block
}

// dots[hp * NK + k]: the 8-lane dots (no tail) of head hp of the NP pairs at
// qp with key k of the NK rows at rows (stride R), over R8 chunks.
template <int NP, int NK>
void ScoreBlock(const float* qp, int64_t R8, const float* rows, int64_t R, float* dots) {
  __m512 acc[NP][NK];
#pragma GCC unroll 16
  for (auto& pk : acc)
#pragma GCC unroll 16
    for (auto& x : pk) x = _mm512_setzero_ps();
  for (int64_t c = 0; c < R8; ++c) {
    __m512 r[NK];
#pragma GCC unroll 16
    for (int k = 0; k < NK; ++k) r[k] = _mm512_broadcast_f32x8(_mm256_loadu_ps(rows + k * R + 8 * c));
#pragma GCC unroll 16
    for (int p = 0; p < NP; ++p) {
      const __m512 qv = _mm512_loadu_ps(qp + (p * R8 + c) * 16);
#pragma GCC unroll 16
      for (int k = 0; k < NK; ++k) acc[p][k] = _mm512_fmadd_ps(qv, r[k], acc[p][k]);
    }
  }
#pragma GCC unroll 16
  for (int p = 0; p < NP; ++p)
#pragma GCC unroll 16
    for (int k = 0; k < NK; ++k) {
      const __m512 v = ReduceHalves(acc[p][k]);
      dots[(2 * p) * NK + k] = _mm512_cvtss_f32(v);
      dots[(2 * p + 1) * NK + k] = _mm_cvtss_f32(_mm512_extractf32x4_ps(v, 2));
    }
}

using ScoreFn = void (*)(const float*, int64_t, const float*, int64_t, float*);
constexpr ScoreFn kScoreBlocks[kPairs][kKeys] = {
    {ScoreBlock<1, 1>, ScoreBlock<1, 2>, ScoreBlock<1, 3>, ScoreBlock<1, 4>},
    {ScoreBlock<2, 1>, ScoreBlock<2, 2>, ScoreBlock<2, 3>, ScoreBlock<2, 4>},
    {ScoreBlock<3, 1>, ScoreBlock<3, 2>, ScoreBlock<3, 3>, ScoreBlock<3, 4>},
    {ScoreBlock<4, 1>, ScoreBlock<4, 2>, ScoreBlock<4, 3>, ScoreBlock<4, 4>}};

// o (HB heads, stride C) += the weighted rows: for t < nt in order,
// o_h = fma(w[h * n + t], rows[t * C ..], o_h), over NV vectors (the last under `last`).
template <int HB, int NV>
void SumBlock(const float* w, int64_t n, const float* rows, int64_t C, int64_t nt, float* o, __mmask16 last) {
  __mmask16 m[NV];
#pragma GCC unroll 16
  for (int v = 0; v < NV; ++v) m[v] = v + 1 < NV ? __mmask16{0xFFFF} : last;
  __m512 acc[HB][NV];
#pragma GCC unroll 16
  for (int h = 0; h < HB; ++h)
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) acc[h][v] = _mm512_maskz_loadu_ps(m[v], o + h * C + 16 * v);
  for (int64_t t = 0; t < nt; ++t) {
    __m512 r[NV];
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) r[v] = _mm512_maskz_loadu_ps(m[v], rows + t * C + 16 * v);
#pragma GCC unroll 16
    for (int h = 0; h < HB; ++h) {
      const __m512 wv = _mm512_set1_ps(w[h * n + t]);
#pragma GCC unroll 16
      for (int v = 0; v < NV; ++v) acc[h][v] = _mm512_fmadd_ps(wv, r[v], acc[h][v]);
    }
  }
#pragma GCC unroll 16
  for (int h = 0; h < HB; ++h)
#pragma GCC unroll 16
    for (int v = 0; v < NV; ++v) _mm512_mask_storeu_ps(o + h * C + 16 * v, m[v], acc[h][v]);
}

using SumFn = void (*)(const float*, int64_t, const float*, int64_t, int64_t, float*, __mmask16);
constexpr SumFn kSumBlocks[kHeads][kVecs] = {{SumBlock<1, 1>, SumBlock<1, 2>, SumBlock<1, 3>, SumBlock<1, 4>},
                                             {SumBlock<2, 1>, SumBlock<2, 2>, SumBlock<2, 3>, SumBlock<2, 4>},
                                             {SumBlock<3, 1>, SumBlock<3, 2>, SumBlock<3, 3>, SumBlock<3, 4>},
                                             {SumBlock<4, 1>, SumBlock<4, 2>, SumBlock<4, 3>, SumBlock<4, 4>}};

// qp (pairs, R8, 16): q's heads paired chunk by chunk (a missing odd head reads zeros).
void PackPairs(const float* q, int64_t H, int64_t R, float* qp) {
  const int64_t R8 = R / 8;
  for (int64_t pr = 0; pr < (H + 1) / 2; ++pr)
    for (int64_t c = 0; c < R8; ++c)
      for (int64_t l = 0; l < 16; ++l) {
        const int64_t h = 2 * pr + l / 8;
        qp[(pr * R8 + c) * 16 + l] = h < H ? q[h * R + 8 * c + l % 8] : 0.0f;
      }
}

// p (H, n): the scaled scores, -inf where masked (MlaAttendScalar's first loop).
void Scores(const MlaAttentionArgs& a, const float* q, const int32_t* keys, int64_t n, const uint8_t* allowed, float* p,
            float* tile, float* qp) {
  const int64_t H = a.n_heads, R = a.kv_lora + a.rope, R8 = R / 8, pairs = (H + 1) / 2;
  PackPairs(q, H, R, qp);
  float dots[2 * kPairs * kKeys];
  for (int64_t j0 = 0; j0 < n; j0 += kMlaTileKeys) {
    const int64_t nt = std::min(kMlaTileKeys, n - j0);
    for (int64_t t = 0; t < nt; ++t) MlaWidenRow(a, keys ? keys[j0 + t] : j0 + t, tile + t * R, R);
    for (int64_t k0 = 0; k0 < nt; k0 += kKeys) {
      const int64_t nk = std::min<int64_t>(kKeys, nt - k0);
      for (int64_t p0 = 0; p0 < pairs; p0 += kPairs) {
        const int64_t np = std::min<int64_t>(kPairs, pairs - p0);
        kScoreBlocks[np - 1][nk - 1](qp + p0 * R8 * 16, R8, tile + k0 * R, R, dots);
        for (int64_t hp = 0; hp < 2 * np && 2 * p0 + hp < H; ++hp) {
          const int64_t h = 2 * p0 + hp;
          for (int64_t k = 0; k < nk; ++k) {
            const float* row = tile + (k0 + k) * R;
            float s = dots[hp * nk + k];
            for (int64_t i = 8 * R8; i < R; ++i) s = __builtin_fmaf(q[h * R + i], row[i], s);
            const int64_t j = j0 + k0 + k, pos = keys ? keys[j] : j;
            p[h * n + j] = allowed != nullptr && allowed[pos] == 0 ? -INFINITY : a.scale * s;
          }
        }
      }
    }
  }
}

// out (H, C) = sum_j p[h, j] c_j in key order (MlaAttendScalar's second loop).
void WeightedSum(const MlaAttentionArgs& a, const int32_t* keys, int64_t n, const float* p, float* tile, float* out) {
  const int64_t H = a.n_heads, C = a.kv_lora;
  std::memset(out, 0, static_cast<size_t>(H * C) * sizeof(float));
  for (int64_t j0 = 0; j0 < n; j0 += kMlaTileKeys) {
    const int64_t nt = std::min(kMlaTileKeys, n - j0);
    for (int64_t t = 0; t < nt; ++t) MlaWidenRow(a, keys ? keys[j0 + t] : j0 + t, tile + t * C, C);
    for (int64_t h0 = 0; h0 < H; h0 += kHeads) {
      const int64_t hb = std::min<int64_t>(kHeads, H - h0);
      for (int64_t d0 = 0; d0 < C; d0 += 16 * kVecs) {
        const int64_t nd = std::min<int64_t>(16 * kVecs, C - d0), nv = (nd + 15) / 16, rest = nd - 16 * (nv - 1);
        const auto last = static_cast<__mmask16>((1u << rest) - 1u);
        kSumBlocks[hb - 1][nv - 1](p + h0 * n + j0, n, tile + d0, C, nt, out + h0 * C + d0, last);
      }
    }
  }
}

}  // namespace

void MlaAttendAvx512(const MlaAttentionArgs& a, const float* q, const int32_t* keys, int64_t n_keys,
                     const uint8_t* allowed, float* out, float* scratch) {
  const int64_t H = a.n_heads, R = a.kv_lora + a.rope, C = a.kv_lora;
  float* p = scratch;                   // (H, n_keys) scores, then weights
  float* tile = p + H * n_keys;         // (kMlaTileKeys, R) widened rows
  float* qp = tile + kMlaTileKeys * R;  // ((H + 1) / 2, R / 8, 16) paired queries
  Scores(a, q, keys, n_keys, allowed, p, tile, qp);
  float sums[1024];
  MlaSoftmaxRows(p, H, n_keys, sums);
  WeightedSum(a, keys, n_keys, p, tile, out);
  for (int64_t h = 0; h < H; ++h) {
    const float inv = 1.0f / sums[h];
    for (int64_t d = 0; d < C; ++d) out[h * C + d] *= inv;
  }
}

}  // namespace pg
