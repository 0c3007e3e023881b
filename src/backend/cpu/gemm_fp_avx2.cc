// AVX2 GEMM tiles for NVFP4 (against Q8_0 activations) and FP8_E4M3
// (against f32 activations), register tiles of RM weight rows x RN tokens
// walked by gemm_tile_walk.h.
//
// NVFP4: each half of a 64-element block meets one Q8_0 block: the 32 E2M1
// levels (one pshufb of kFp4Values) go through sign + maddubs + madd, which
// leaves 8 int32 lanes of 4 elements each: lanes 0-3 are sub-block 2h, lanes
// 4-7 sub-block 2h + 1, so one vector of per-lane scales applies both
// sub-blocks' UE4M3 scales in one FMA.
//
// FP8_E4M3: 8 bytes widen straight to their f32 values (Fp8x8) for
// gemm_fp8_tiles.h's tiles (row-major and FP8x4): a block's products summed
// before its scale, the same arithmetic for every tile shape.
#include <cstring>

#include "backend/cpu/gemm_fp8_tiles.h"
#include "backend/cpu/gemm_tiles_avx2.h"
#include "backend/cpu/kernel_impls.h"
#include "backend/cpu/quant_fp.h"

namespace pg::avx2 {
namespace {

// The 32 levels of half h (elements 32h .. 32h + 31) of an NVFP4 block, in element order.
inline __m256i NvLevels(const BlockNVFP4* b, int h) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b->qs + 16 * h));
  const __m128i m4 = _mm_set1_epi8(0x0F);
  const __m128i lo = _mm_and_si128(raw, m4), hi = _mm_and_si128(_mm_srli_epi16(raw, 4), m4);
  const __m256i nib = _mm256_set_m128i(_mm_unpackhi_epi64(lo, hi), _mm_unpacklo_epi64(lo, hi));
  const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kFp4Values)));
  return _mm256_shuffle_epi8(table, nib);
}

// Per-lane scales of half h: 4 x sub-block 2h's, 4 x sub-block 2h + 1's.
inline __m256 NvScales(const BlockNVFP4* b, int h) {
  return _mm256_set_m128(_mm_set1_ps(Ue4m3Scale(b->d[2 * h + 1])), _mm_set1_ps(Ue4m3Scale(b->d[2 * h])));
}

template <int RM, int RN>
void TileNVFP4(const uint8_t* wbase, size_t wstride, const uint8_t* xbase, size_t xs, int64_t nb, float* y,
               int64_t ldy) {
  __m256 acc[RM][RN];
  for (int i = 0; i < RM; ++i)
    for (int j = 0; j < RN; ++j) acc[i][j] = _mm256_setzero_ps();
  const __m256i ones = _mm256_set1_epi16(1);
  for (int64_t b = 0; b < nb; ++b) {
    for (int h = 0; h < 2; ++h) {
      __m256 xd[RN];
      __m256i xv[RN];
      for (int j = 0; j < RN; ++j) {
        const BlockQ8_0* xb = reinterpret_cast<const BlockQ8_0*>(xbase + j * xs) + 2 * b + h;
        xd[j] = _mm256_set1_ps(H2F(xb->d));
        xv[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb->qs));
      }
      for (int i = 0; i < RM; ++i) {
        const BlockNVFP4* wb = reinterpret_cast<const BlockNVFP4*>(wbase + i * wstride) + b;
        const __m256i w = NvLevels(wb, h);
        const __m256i w_abs = _mm256_sign_epi8(w, w);
        const __m256 wd = NvScales(wb, h);
        for (int j = 0; j < RN; ++j) {
          const __m256i p16 = _mm256_maddubs_epi16(w_abs, _mm256_sign_epi8(xv[j], w));
          const __m256 dot = _mm256_cvtepi32_ps(_mm256_madd_epi16(p16, ones));
          acc[i][j] = _mm256_fmadd_ps(_mm256_mul_ps(wd, xd[j]), dot, acc[i][j]);
        }
      }
    }
  }
  for (int i = 0; i < RM; ++i)
    for (int j = 0; j < RN; ++j) y[j * ldy + i] = HSum(acc[i][j]);
}

// 8 E4M3 bytes as their f32 values, exactly (gemm_fp_avx512.cc's Fp8x16 has the derivation).
inline __m256 Fp8x8(const uint8_t* q) {
  const __m256i b = _mm256_cvtepi8_epi32(_mm_loadl_epi64(reinterpret_cast<const __m128i*>(q)));
  const __m256i v = _mm256_and_si256(_mm256_slli_epi32(b, 20), _mm256_set1_epi32(static_cast<int32_t>(0x87F00000u)));
  return _mm256_mul_ps(_mm256_castsi256_ps(v), _mm256_set1_ps(0x1p120f));
}

struct Ymm {
  using T = __m256;
  static constexpr int kLanes = 8;
  static T Zero() { return _mm256_setzero_ps(); }
  static T Load(const float* p) { return _mm256_loadu_ps(p); }
  static T Set1(float v) { return _mm256_set1_ps(v); }
  static T Fma(T a, T b, T c) { return _mm256_fmadd_ps(a, b, c); }
  static T Widen(const uint8_t* q) { return Fp8x8(q); }
  static float HSum(T v) { return pg::avx2::HSum(v); }
};

}  // namespace

void GemmNVFP4(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1,
               float* y, int64_t ldy) {
  const int64_t nb = w.cols / kQKNV;
  const auto* wbase = static_cast<const uint8_t*>(w.data);
  const auto* xbase = static_cast<const uint8_t*>(xa);
  ForEachTile<4, 2>(r0, r1, t0, t1, [&]<int RM, int RN>(int64_t r, int64_t t) {
    TileNVFP4<RM, RN>(wbase + r * w.row_bytes, w.row_bytes, xbase + t * xs, xs, nb, y + t * ldy + r, ldy);
  });
}

// 4-row tiles of up to 2 tokens: the prefill tile's 2 rows x 2 tokens keep 4 block sums, 4 row
// sums, 4 widened vectors and 2 x vectors in the 16 ymm registers.
void GemmFP8_E4M3(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1,
                  float* y, int64_t ldy) {
  fp8_tiles::GemmRowMajor<Ymm, 2>(w, xa, xs, t0, t1, r0, r1, y, ldy);
}

void GemmFP8x4(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1,
               float* y, int64_t ldy) {
  fp8_tiles::GemmX4<Ymm, 2>(w, xa, xs, t0, t1, r0, r1, y, ldy);
}

}  // namespace pg::avx2
