// AVX-512 (F/BW/VL + VNNI) GEMM tiles for NVFP4 and FP8_E4M3, the AVX2
// tiles' arithmetic (gemm_fp_avx2.cc has the derivations) with the 32 vector
// registers' larger tiles:
//   NVFP4    : 256-bit VPDPBUSD (|w| x sign(x, w), no int16 step), 4 x 4 tile;
//   FP8_E4M3 : 16 weights widened per 512-bit vector straight to f32 (Fp8x16),
//              gemm_fp8_tiles.h's tiles (row-major and FP8x4).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include "backend/cpu/gemm_fp8_tiles.h"
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

// 16 E4M3 bytes as their f32 values, exactly: the sign-extended byte shifted left by 20 and masked
// puts the sign at bit 31 and the exponent and mantissa at bits 26-20, an f32 of value v * 2^-120
// (E4M3 subnormals land on f32 subnormals; the DAZ bit of MXCSR is off, prosgrow never sets it),
// and the product by 2^120 is exact. Four integer-side operations and one multiply per 16 weights:
// on Zen 5 1.4x the throughput of widening through f16 (vcvtph2ps).
inline __m512 Fp8x16(const uint8_t* q) {
  const __m512i b = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)));
  const __m512i v = _mm512_and_si512(_mm512_slli_epi32(b, 20), _mm512_set1_epi32(static_cast<int32_t>(0x87F00000u)));
  return _mm512_mul_ps(_mm512_castsi512_ps(v), _mm512_set1_ps(0x1p120f));
}

struct Zmm {
  using T = __m512;
  static constexpr int kLanes = 16;
  static T Zero() { return _mm512_setzero_ps(); }
  static T Load(const float* p) { return _mm512_loadu_ps(p); }
  static T Set1(float v) { return _mm512_set1_ps(v); }
  static T Fma(T a, T b, T c) { return _mm512_fmadd_ps(a, b, c); }
  static T Widen(const uint8_t* q) { return Fp8x16(q); }
  static float HSum(T v) { return HSum512(v); }
};

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
  fp8_tiles::GemmRowMajor<Zmm, 4>(w, xa, xs, t0, t1, r0, r1, y, ldy);
}

void GemmFP8x4(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1,
               float* y, int64_t ldy) {
  fp8_tiles::GemmX4<Zmm, 4>(w, xa, xs, t0, t1, r0, r1, y, ldy);
}

}  // namespace pg::avx512
