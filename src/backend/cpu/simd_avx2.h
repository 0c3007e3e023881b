// Private: small AVX2 helpers shared by the *_avx2.cc kernels (and HSum by
// the *_avx512.cc ones, simd_avx512.h). Include only from files compiled with
// -mavx2 -mfma -mf16c.
#pragma once

#include <immintrin.h>

// Internal linkage (an unnamed namespace): files compiled for different ISAs
// include this header, and an out-of-line copy built with one ISA's flags must
// never be linked into another's (an AVX-512 encoding run on an AVX2-only CPU).
namespace pg::avx2 {
namespace {  // NOLINT(build/namespaces): see above

inline float HSum(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

inline float HMax(__m256 v) {
  __m128 s = _mm_max_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_max_ps(s, _mm_movehl_ps(s, s));
  s = _mm_max_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// exp(x) with relative error ~2e-7 (Cephes polynomial); exactly 0 below -87.3
// (so -inf from attention masks gives 0), +inf above 88.7.
inline __m256 Exp(__m256 x) {
  const __m256 lo = _mm256_set1_ps(-87.3f);
  const __m256 hi = _mm256_set1_ps(88.7f);
  const __m256 keep = _mm256_cmp_ps(x, lo, _CMP_GE_OQ);
  const __m256 over = _mm256_cmp_ps(x, hi, _CMP_GT_OQ);
  x = _mm256_max_ps(_mm256_min_ps(x, hi), lo);
  const __m256 n = _mm256_round_ps(_mm256_mul_ps(x, _mm256_set1_ps(1.44269504088896341f)),
                                   _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fnmadd_ps(n, _mm256_set1_ps(0.693359375f), x);
  r = _mm256_fnmadd_ps(n, _mm256_set1_ps(-2.12194440e-4f), r);
  __m256 p = _mm256_set1_ps(1.9875691500e-4f);
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.3981999507e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(8.3334519073e-3f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(4.1665795894e-2f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(1.6666665459e-1f));
  p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(5.0000001201e-1f));
  p = _mm256_fmadd_ps(p, _mm256_mul_ps(r, r), _mm256_add_ps(r, _mm256_set1_ps(1.0f)));
  // 2^n for n in [-126, 128]: split in two factors so n = 128 does not overflow the exponent.
  const __m256i ni = _mm256_cvtps_epi32(n);
  const __m256i n1 = _mm256_srai_epi32(ni, 1);
  const __m256i n2 = _mm256_sub_epi32(ni, n1);
  const __m256 f1 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n1, _mm256_set1_epi32(127)), 23));
  const __m256 f2 = _mm256_castsi256_ps(_mm256_slli_epi32(_mm256_add_epi32(n2, _mm256_set1_epi32(127)), 23));
  p = _mm256_mul_ps(_mm256_mul_ps(p, f1), f2);
  p = _mm256_blendv_ps(p, _mm256_set1_ps(__builtin_inff()), over);
  return _mm256_and_ps(p, keep);
}

// 8 bf16 (uint16) -> 8 f32.
inline __m256 LoadBF16(const uint16_t* p) {
  const __m256i v = _mm256_cvtepu16_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
  return _mm256_castsi256_ps(_mm256_slli_epi32(v, 16));
}
inline __m256 LoadF16(const uint16_t* p) {
  return _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)));
}

}  // namespace
}  // namespace pg::avx2
