// ExpF32: the deterministic exp of the tiled attention softmax, with a scalar
// form (the reference) and, in translation units compiled with AVX2 + FMA, an
// 8-lane form (and with AVX-512F a 16-lane form) that gives bit-identical
// results lane by lane.
//
// Method: n = round_half_even(x * log2(e)); r = x - n*ln2 (Cody-Waite, two
// fmas); exp(r) by a degree-7 Taylor polynomial in Horner form with fmas
// (|r| <= ln2/2, truncation error < 0.06 ulp); result = p * 2^n with 2^n built
// from its exponent bits. Within ~1 ulp of the correctly rounded exp (the
// attention test checks <= 2 ulp) on the range softmax uses, x in
// [kExpF32Min, 0].
//
// Domain: x is clamped to [kExpF32Min, 88]; x < kExpF32Min (including -inf)
// gives exactly 0 (so exp(-inf - M) = 0 for masked keys); x > 88 saturates at
// exp(88). A NaN gives exp(kExpF32Min), not NaN: softmax scores are finite.
//
// Thread-safety: pure functions.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#if defined(__AVX2__) && defined(__FMA__)
#include <immintrin.h>
#endif

namespace pg {

inline constexpr float kExpF32Min = -87.33654475f;  // ln(2^-126): 2^n stays a normal float
inline constexpr float kExpF32Max = 88.0f;

namespace exp_f32_detail {
inline constexpr float kLog2e = 1.44269504088896341f;
inline constexpr float kLn2Hi = 0.693359375f;     // 8 significant bits: n * kLn2Hi is exact
inline constexpr float kLn2Lo = -2.12194440e-4f;  // ln2 - kLn2Hi
inline constexpr float kC[8] = {1.0f,         1.0f,          0.5f,          1.0f / 6.0f,
                                1.0f / 24.0f, 1.0f / 120.0f, 1.0f / 720.0f, 1.0f / 5040.0f};
}  // namespace exp_f32_detail

// Internal linkage (an unnamed namespace): files compiled for different ISAs
// include this header, and an out-of-line copy built with one ISA's flags must
// never be linked into another's (an AVX-512 encoding run on an AVX2-only CPU).
namespace {  // NOLINT(build/namespaces): see above

inline float ExpF32(float x) {
  using namespace exp_f32_detail;
  float xc = x > kExpF32Min ? x : kExpF32Min;   // same selection as _mm256_max_ps(x, min), NaN included
  xc = xc < kExpF32Max ? xc : kExpF32Max;       // same as _mm256_min_ps(xc, max)
  const float n = std::nearbyint(xc * kLog2e);  // default rounding: to nearest, ties to even
  float r = std::fma(n, -kLn2Hi, xc);
  r = std::fma(n, -kLn2Lo, r);
  float p = kC[7];
  for (int i = 6; i >= 0; --i) p = std::fma(p, r, kC[i]);
  const uint32_t bits = static_cast<uint32_t>(static_cast<int32_t>(n) + 127) << 23;
  float scale;
  std::memcpy(&scale, &bits, 4);
  const float y = p * scale;
  return x < kExpF32Min ? 0.0f : y;
}

#if defined(__AVX2__) && defined(__FMA__)
// Eight lanes of ExpF32, bit-identical to the scalar form.
inline __m256 ExpF32x8(__m256 x) {
  using namespace exp_f32_detail;
  __m256 xc = _mm256_max_ps(x, _mm256_set1_ps(kExpF32Min));
  xc = _mm256_min_ps(xc, _mm256_set1_ps(kExpF32Max));
  const __m256 n =
      _mm256_round_ps(_mm256_mul_ps(xc, _mm256_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m256 r = _mm256_fmadd_ps(n, _mm256_set1_ps(-kLn2Hi), xc);
  r = _mm256_fmadd_ps(n, _mm256_set1_ps(-kLn2Lo), r);
  __m256 p = _mm256_set1_ps(kC[7]);
  for (int i = 6; i >= 0; --i) p = _mm256_fmadd_ps(p, r, _mm256_set1_ps(kC[i]));
  const __m256i bits = _mm256_slli_epi32(_mm256_add_epi32(_mm256_cvtps_epi32(n), _mm256_set1_epi32(127)), 23);
  const __m256 y = _mm256_mul_ps(p, _mm256_castsi256_ps(bits));
  const __m256 under = _mm256_cmp_ps(x, _mm256_set1_ps(kExpF32Min), _CMP_LT_OQ);
  return _mm256_andnot_ps(under, y);
}
#endif

#if defined(__AVX512F__)
// Sixteen lanes of ExpF32: the operations of ExpF32x8, lane by lane.
inline __m512 ExpF32x16(__m512 x) {
  using namespace exp_f32_detail;
  __m512 xc = _mm512_max_ps(x, _mm512_set1_ps(kExpF32Min));
  xc = _mm512_min_ps(xc, _mm512_set1_ps(kExpF32Max));
  const __m512 n =
      _mm512_roundscale_ps(_mm512_mul_ps(xc, _mm512_set1_ps(kLog2e)), _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fmadd_ps(n, _mm512_set1_ps(-kLn2Hi), xc);
  r = _mm512_fmadd_ps(n, _mm512_set1_ps(-kLn2Lo), r);
  __m512 p = _mm512_set1_ps(kC[7]);
  for (int i = 6; i >= 0; --i) p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(kC[i]));
  const __m512i bits = _mm512_slli_epi32(_mm512_add_epi32(_mm512_cvtps_epi32(n), _mm512_set1_epi32(127)), 23);
  const __m512 y = _mm512_mul_ps(p, _mm512_castsi512_ps(bits));
  const __mmask16 under = _mm512_cmp_ps_mask(x, _mm512_set1_ps(kExpF32Min), _CMP_LT_OQ);
  return _mm512_maskz_mov_ps(static_cast<__mmask16>(~under), y);
}
#endif

}  // namespace
}  // namespace pg
