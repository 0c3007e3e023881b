// AVX-512 (F/BW/VL + VNNI) GEMM tiles for NVFP4 and FP8_E4M3, the AVX2
// tiles' arithmetic (gemm_fp_avx2.cc has the derivations) with the 32 vector
// registers' larger tiles:
//   NVFP4    : 256-bit VPDPBUSD (|w| x sign(x, w), no int16 step), 4 x 4 tile;
//   FP8_E4M3 : 32 weights widened per 512-bit vector, two vcvtph2ps to f32,
//              4 x 4 tile.
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "backend/cpu/gemm_tile_walk.h"
#include "backend/cpu/kernel_impls.h"
#include "backend/cpu/quant_fp.h"
#include "backend/cpu/simd_avx512.h"

namespace pg::avx512 {
namespace {

inline __m256i NvLevels(const BlockNVFP4* b, int h) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b->qs + 16 * h));
  const __m128i m4 = _mm_set1_epi8(0x0F);
  const __m128i lo = _mm_and_si128(raw, m4), hi = _mm_and_si128(_mm_srli_epi16(raw, 4), m4);
  const __m256i nib = _mm256_set_m128i(_mm_unpackhi_epi64(lo, hi), _mm_unpacklo_epi64(lo, hi));
  const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kFp4Values)));
  return _mm256_shuffle_epi8(table, nib);
}

inline __m256 NvScales(const BlockNVFP4* b, int h) {
  return _mm256_set_m128(_mm_set1_ps(Ue4m3Scale(b->d[2 * h + 1])), _mm_set1_ps(Ue4m3Scale(b->d[2 * h])));
}

template <int RM, int RN>
void TileNVFP4(const uint8_t* wbase, size_t wstride, const uint8_t* xbase, size_t xs, int64_t nb, float* y,
               int64_t ldy) {
  __m256 acc[RM][RN];
  for (int i = 0; i < RM; ++i)
    for (int j = 0; j < RN; ++j) acc[i][j] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    for (int h = 0; h < 2; ++h) {
      __m256 xd[RN];
      __m256i xv[RN];
      for (int j = 0; j < RN; ++j) {
        const BlockQ8_0* xb = reinterpret_cast<const BlockQ8_0*>(xbase + j * xs) + 2 * b + h;
        xd[j] = _mm256_set1_ps(_cvtsh_ss(xb->d));
        xv[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb->qs));
      }
      for (int i = 0; i < RM; ++i) {
        const BlockNVFP4* wb = reinterpret_cast<const BlockNVFP4*>(wbase + i * wstride) + b;
        const __m256i w = NvLevels(wb, h);
        const __m256i w_abs = _mm256_abs_epi8(w);
        const __m256 wd = NvScales(wb, h);
        for (int j = 0; j < RN; ++j) {
          const __m256i dot = _mm256_dpbusd_epi32(_mm256_setzero_si256(), w_abs, _mm256_sign_epi8(xv[j], w));
          acc[i][j] = _mm256_fmadd_ps(_mm256_mul_ps(wd, xd[j]), _mm256_cvtepi32_ps(dot), acc[i][j]);
        }
      }
    }
  }
  for (int i = 0; i < RM; ++i)
    for (int j = 0; j < RN; ++j) y[j * ldy + i] = HSum(acc[i][j]);
}

// 32 E4M3 bytes as f32 values times 2^-8 (exact): elements 0-15 in lo, 16-31 in hi.
inline void Fp8x32(const uint8_t* q, __m512& lo, __m512& hi) {
  const __m512i b = _mm512_cvtepi8_epi16(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(q)));
  const __m512i h = _mm512_and_si512(_mm512_slli_epi16(b, 7), _mm512_set1_epi16(static_cast<int16_t>(0xBF80)));
  lo = _mm512_cvtph_ps(_mm512_castsi512_si256(h));
  hi = _mm512_cvtph_ps(_mm512_extracti64x4_epi64(h, 1));
}

// One token (decode): each block's products accumulate unscaled, and the block's scale multiplies
// the block sum once, instead of every widened weight vector (a quarter of the loop's vector work).
template <int RM>
void TileFP8Decode(const uint8_t* wbase, size_t wstride, const float* x, int64_t nb, float* y) {
  __m512 acc[RM];
  for (int i = 0; i < RM; ++i) acc[i] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    __m512 blk[RM];
    for (int i = 0; i < RM; ++i) blk[i] = _mm512_setzero_ps();
    for (int k = 0; k < kQKNV; k += 32) {
      const __m512 x0 = _mm512_loadu_ps(x + b * kQKNV + k), x1 = _mm512_loadu_ps(x + b * kQKNV + k + 16);
      for (int i = 0; i < RM; ++i) {
        __m512 w0, w1;
        Fp8x32(reinterpret_cast<const BlockFP8_E4M3*>(wbase + i * wstride)[b].q + k, w0, w1);
        blk[i] = _mm512_fmadd_ps(w1, x1, _mm512_fmadd_ps(w0, x0, blk[i]));
      }
    }
    for (int i = 0; i < RM; ++i) {
      const float d = reinterpret_cast<const BlockFP8_E4M3*>(wbase + i * wstride)[b].d * 256.0f;
      acc[i] = _mm512_fmadd_ps(blk[i], _mm512_set1_ps(d), acc[i]);
    }
  }
  for (int i = 0; i < RM; ++i) y[i] = HSum512(acc[i]);
}

template <int RM, int RN>
void TileFP8(const uint8_t* wbase, size_t wstride, const uint8_t* xbase, size_t xs, int64_t nb, float* y, int64_t ldy) {
  if constexpr (RN == 1) {  // one token: its row of y is y[0..RM)
    TileFP8Decode<RM>(wbase, wstride, reinterpret_cast<const float*>(xbase), nb, y);
    return;
  }
  __m512 acc[RM][RN];
  for (int i = 0; i < RM; ++i)
    for (int j = 0; j < RN; ++j) acc[i][j] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    __m512 d[RM];
    for (int i = 0; i < RM; ++i) {
      d[i] = _mm512_set1_ps(reinterpret_cast<const BlockFP8_E4M3*>(wbase + i * wstride)[b].d * 256.0f);
    }
    for (int k = 0; k < kQKNV; k += 32) {
      __m512 x0[RN], x1[RN];
      for (int j = 0; j < RN; ++j) {
        const float* xj = reinterpret_cast<const float*>(xbase + j * xs) + b * kQKNV + k;
        x0[j] = _mm512_loadu_ps(xj);
        x1[j] = _mm512_loadu_ps(xj + 16);
      }
      for (int i = 0; i < RM; ++i) {
        const BlockFP8_E4M3& wb = reinterpret_cast<const BlockFP8_E4M3*>(wbase + i * wstride)[b];
        __m512 w0, w1;
        Fp8x32(wb.q + k, w0, w1);
        w0 = _mm512_mul_ps(w0, d[i]);
        w1 = _mm512_mul_ps(w1, d[i]);
        for (int j = 0; j < RN; ++j) acc[i][j] = _mm512_fmadd_ps(w1, x1[j], _mm512_fmadd_ps(w0, x0[j], acc[i][j]));
      }
    }
  }
  for (int i = 0; i < RM; ++i)
    for (int j = 0; j < RN; ++j) y[j * ldy + i] = HSum512(acc[i][j]);
}

}  // namespace

void GemmNVFP4(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1,
               float* y, int64_t ldy) {
  const int64_t nb = w.cols / kQKNV;
  const auto* wbase = static_cast<const uint8_t*>(w.data);
  const auto* xbase = static_cast<const uint8_t*>(xa);
  ForEachTile<4, 4>(r0, r1, t0, t1, [&]<int RM, int RN>(int64_t r, int64_t t) {
    TileNVFP4<RM, RN>(wbase + r * w.row_bytes, w.row_bytes, xbase + t * xs, xs, nb, y + t * ldy + r, ldy);
  });
}

void GemmFP8_E4M3(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1,
                  float* y, int64_t ldy) {
  const int64_t nb = w.cols / kQKNV;
  const auto* wbase = static_cast<const uint8_t*>(w.data);
  const auto* xbase = static_cast<const uint8_t*>(xa);
  ForEachTile<4, 4>(r0, r1, t0, t1, [&]<int RM, int RN>(int64_t r, int64_t t) {
    TileFP8<RM, RN>(wbase + r * w.row_bytes, w.row_bytes, xbase + t * xs, xs, nb, y + t * ldy + r, ldy);
  });
}

}  // namespace pg::avx512
