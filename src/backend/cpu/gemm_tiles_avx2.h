// Private: the AVX2 GEMM tile templates shared by gemm_avx2.cc and
// gemm_more_avx2.cc. Include only from files compiled with -mavx2 -mfma -mf16c.
//
// 32-element blocks against Q8_0 activations (GemmQ8Tiled): register tiles of
// RM weight rows x RN tokens. Per block, each (row, token) pair costs sign +
// maddubs + madd + cvt + fma: the weight block is loaded (and unpacked to 32
// signed levels) once per RN tokens and the activation block once per RM rows.
// A weight format is described by a traits struct:
//   using Block;                       // the stored block
//   static __m256i Load(const Block*); // 32 int8 levels, |level| <= 127
//   static float Scale(const Block*);  // the block's scale
//   static constexpr bool kHasMin;     // x = Scale * level + Min(b) if true
//   static float Min(const Block*);
// so that row . x = sum_b d_w d_x (levels . xq) [+ m_w d_x sum(xq)].
//
// 256-element K-quants against Q8_K activations (GemmKQuant): each weight row
// is first unpacked, one chunk of super-blocks at a time, into an L1-resident
// form (UnpackedK: unsigned levels q in [0, 63] plus per-16 integer scales and
// offsets):
//   row . x = sum_sb xd * (d * sum_16 sc16 * (q . x) - dmo * sum_16 mo16 * bsum)
// and then meets every token of the tile through the same integer kernel.
#pragma once

#include <algorithm>
#include <cstring>

#include "backend/cpu/gemm_tile_walk.h"
#include "backend/cpu/kernel_impls.h"
#include "backend/cpu/simd_avx2.h"

namespace pg::avx2 {

inline float H2F(uint16_t h) { return _cvtsh_ss(h); }

// 32 nibbles of a Q4_0-style block, element i < 16 the low nibble of qs[i].
inline __m256i LoadNibbles(const uint8_t* qs) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(qs));
  const __m256i both = _mm256_set_m128i(_mm_srli_epi16(raw, 4), raw);
  return _mm256_and_si256(both, _mm256_set1_epi8(0x0F));
}

struct Q8_0Weights {
  using Block = BlockQ8_0;
  static constexpr bool kHasMin = false;
  static __m256i Load(const Block* b) { return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(b->qs)); }
  static float Scale(const Block* b) { return H2F(b->d); }
  static float Min(const Block*) { return 0.0f; }
};

struct Q4_0Weights {
  using Block = BlockQ4_0;
  static constexpr bool kHasMin = false;
  static __m256i Load(const Block* b) { return _mm256_sub_epi8(LoadNibbles(b->qs), _mm256_set1_epi8(8)); }
  static float Scale(const Block* b) { return H2F(b->d); }
  static float Min(const Block*) { return 0.0f; }
};

template <typename W, int RM, int RN>
void TileQ8(const uint8_t* wbase, size_t wstride, const uint8_t* xbase, size_t xs, int64_t nb, float* y, int64_t ldy) {
  using WBlock = typename W::Block;
  __m256 acc[RM][RN];
  for (int i = 0; i < RM; ++i)
    for (int j = 0; j < RN; ++j) acc[i][j] = _mm256_setzero_ps();
  const __m256i ones = _mm256_set1_epi16(1);
  // maddubs needs one unsigned operand: |a| against sign(b, a). Take the
  // absolute value on the side with fewer vectors per block (x for decode).
  constexpr bool kAbsX = RN < RM;
  for (int64_t b = 0; b < nb; ++b) {
    __m256 xd[RN];
    __m256i xv[RN], xabs[RN];
    [[maybe_unused]] __m256 xsum[RN];  // 8 partial sums of token j's levels
    for (int j = 0; j < RN; ++j) {
      const BlockQ8_0* xb = reinterpret_cast<const BlockQ8_0*>(xbase + j * xs) + b;
      xd[j] = _mm256_set1_ps(H2F(xb->d));
      xv[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb->qs));
      if constexpr (kAbsX) xabs[j] = _mm256_sign_epi8(xv[j], xv[j]);
      if constexpr (W::kHasMin) {
        const __m256i p16 = _mm256_maddubs_epi16(_mm256_set1_epi8(1), xv[j]);
        xsum[j] = _mm256_cvtepi32_ps(_mm256_madd_epi16(p16, ones));
      }
    }
    for (int i = 0; i < RM; ++i) {
      const WBlock* wb = reinterpret_cast<const WBlock*>(wbase + i * wstride) + b;
      const __m256i w = W::Load(wb);
      const __m256 wd = _mm256_set1_ps(W::Scale(wb));
      __m256i w_abs;
      if constexpr (!kAbsX) w_abs = _mm256_sign_epi8(w, w);
      for (int j = 0; j < RN; ++j) {
        __m256i p16;
        if constexpr (kAbsX) {
          p16 = _mm256_maddubs_epi16(xabs[j], _mm256_sign_epi8(w, xv[j]));
        } else {
          p16 = _mm256_maddubs_epi16(w_abs, _mm256_sign_epi8(xv[j], w));
        }
        const __m256 dot = _mm256_cvtepi32_ps(_mm256_madd_epi16(p16, ones));
        acc[i][j] = _mm256_fmadd_ps(_mm256_mul_ps(wd, xd[j]), dot, acc[i][j]);
        if constexpr (W::kHasMin) {
          acc[i][j] = _mm256_fmadd_ps(_mm256_mul_ps(_mm256_set1_ps(W::Min(wb)), xd[j]), xsum[j], acc[i][j]);
        }
      }
    }
  }
  for (int i = 0; i < RM; ++i)
    for (int j = 0; j < RN; ++j) y[j * ldy + i] = HSum(acc[i][j]);
}

// Register tile of 4 rows x 3 tokens: 12 accumulators of the 16 ymm registers
// (4x2, 3x3 and 2x4 measured no faster).
template <typename W>
void GemmQ8Tiled(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1,
                 float* y, int64_t ldy) {
  const int64_t nb = w.cols / kQK;
  const auto* wbase = static_cast<const uint8_t*>(w.data);
  const auto* xbase = static_cast<const uint8_t*>(xa);
  ForEachTile<4, 3>(r0, r1, t0, t1, [&]<int RM, int RN>(int64_t r, int64_t t) {
    TileQ8<W, RM, RN>(wbase + r * w.row_bytes, w.row_bytes, xbase + t * xs, xs, nb, y + t * ldy + r, ldy);
  });
}

// One unpacked super-block (see the file comment).
struct alignas(32) UnpackedK {
  uint8_t q[kQKK];     // levels, q[i] for element i
  int16_t scv[8][16];  // per 32-element chunk: 8 x scale(first 16), 8 x scale(second 16)
  int16_t mo[16];      // per-16 offset multipliers (pairs with bsums)
  float d;             // scale of sc
  float dmo;           // scale of the offset term
};

// acc[j] += dot(unpacked super-block, token j's Q8_K block), RN tokens.
template <int RN>
inline void DotUnpacked(const UnpackedK& u, const BlockQ8_K* const* xb, __m256* acc) {
  __m256i sumi[RN];
  for (int j = 0; j < RN; ++j) sumi[j] = _mm256_setzero_si256();
  for (int c = 0; c < 8; ++c) {
    const __m256i q = _mm256_load_si256(reinterpret_cast<const __m256i*>(u.q + 32 * c));
    const __m256i sc = _mm256_load_si256(reinterpret_cast<const __m256i*>(u.scv[c]));
    for (int j = 0; j < RN; ++j) {
      const __m256i x = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb[j]->qs + 32 * c));
      sumi[j] = _mm256_add_epi32(sumi[j], _mm256_madd_epi16(_mm256_maddubs_epi16(q, x), sc));
    }
  }
  const __m256i mo = _mm256_load_si256(reinterpret_cast<const __m256i*>(u.mo));
  for (int j = 0; j < RN; ++j) {
    const __m256i bs = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb[j]->bsums));
    const __m256 summ = _mm256_cvtepi32_ps(_mm256_madd_epi16(bs, mo));
    const float xd = xb[j]->d;
    acc[j] = _mm256_fmadd_ps(_mm256_set1_ps(u.d * xd), _mm256_cvtepi32_ps(sumi[j]), acc[j]);
    acc[j] = _mm256_fnmadd_ps(_mm256_set1_ps(u.dmo * xd), summ, acc[j]);
  }
}

template <typename Block, void (*Unpack)(const Block&, UnpackedK&)>
void GemmKQuant(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1,
                float* y, int64_t ldy) {
  constexpr int kChunk = 16;  // super-blocks unpacked at a time (~9 KiB)
  constexpr int RN = 4;
  UnpackedK u[kChunk];
  const int64_t nb = w.cols / kQKK;
  const auto* xbase = static_cast<const uint8_t*>(xa);
  for (int64_t r = r0; r < r1; ++r) {
    const Block* wr = reinterpret_cast<const Block*>(static_cast<const uint8_t*>(w.data) + r * w.row_bytes);
    for (int64_t t = t0; t < t1; t += RN) {
      const int rn = static_cast<int>(std::min<int64_t>(RN, t1 - t));
      __m256 acc[RN] = {_mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps(), _mm256_setzero_ps()};
      for (int64_t c0 = 0; c0 < nb; c0 += kChunk) {
        const int nc = static_cast<int>(std::min<int64_t>(kChunk, nb - c0));
        // Unpack once per row chunk; with many tokens the chunk is reused from L1.
        if (t == t0 || nb > kChunk) {
          for (int c = 0; c < nc; ++c) Unpack(wr[c0 + c], u[c]);
        }
        for (int c = 0; c < nc; ++c) {
          const BlockQ8_K* xb[RN];
          for (int j = 0; j < rn; ++j) {
            xb[j] = reinterpret_cast<const BlockQ8_K*>(xbase + (t + j) * xs) + c0 + c;
          }
          switch (rn) {
            case 4: DotUnpacked<4>(u[c], xb, acc); break;
            case 3: DotUnpacked<3>(u[c], xb, acc); break;
            case 2: DotUnpacked<2>(u[c], xb, acc); break;
            case 1: DotUnpacked<1>(u[c], xb, acc); break;
          }
        }
      }
      for (int j = 0; j < rn; ++j) y[(t + j) * ldy + r] = HSum(acc[j]);
    }
  }
}

}  // namespace pg::avx2
