// AVX-512 forms of vec_ops.h kernels whose AVX2 forms are compute-bound in a
// forward pass. Each gives the AVX2 form's bits: the same operations lane by
// lane (16 lanes where AVX2 has 8), and the AVX2 form's split of a row into
// vector and scalar parts, so moving between the two tables changes nothing.
// GCC 12's AVX-512 intrinsics raise false -W(maybe-)uninitialized warnings
// when inlined (see gemm_avx512.cc).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cmath>

#include "backend/cpu/kernel_impls.h"

namespace pg::avx512 {
namespace {

// simd_avx2.h's Exp on 16 lanes: the same constants and operations per lane
// (its blendv and and-mask as mask moves).
__m512 Exp16(__m512 x) {
  const __m512 lo = _mm512_set1_ps(-87.3f);
  const __m512 hi = _mm512_set1_ps(88.7f);
  const __mmask16 keep = _mm512_cmp_ps_mask(x, lo, _CMP_GE_OQ);
  const __mmask16 over = _mm512_cmp_ps_mask(x, hi, _CMP_GT_OQ);
  x = _mm512_max_ps(_mm512_min_ps(x, hi), lo);
  const __m512 n = _mm512_roundscale_ps(_mm512_mul_ps(x, _mm512_set1_ps(1.44269504088896341f)),
                                        _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC);
  __m512 r = _mm512_fnmadd_ps(n, _mm512_set1_ps(0.693359375f), x);
  r = _mm512_fnmadd_ps(n, _mm512_set1_ps(-2.12194440e-4f), r);
  __m512 p = _mm512_set1_ps(1.9875691500e-4f);
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.3981999507e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(8.3334519073e-3f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(4.1665795894e-2f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(1.6666665459e-1f));
  p = _mm512_fmadd_ps(p, r, _mm512_set1_ps(5.0000001201e-1f));
  p = _mm512_fmadd_ps(p, _mm512_mul_ps(r, r), _mm512_add_ps(r, _mm512_set1_ps(1.0f)));
  const __m512i ni = _mm512_cvtps_epi32(n);
  const __m512i n1 = _mm512_srai_epi32(ni, 1);
  const __m512i n2 = _mm512_sub_epi32(ni, n1);
  const __m512 f1 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n1, _mm512_set1_epi32(127)), 23));
  const __m512 f2 = _mm512_castsi512_ps(_mm512_slli_epi32(_mm512_add_epi32(n2, _mm512_set1_epi32(127)), 23));
  p = _mm512_mul_ps(_mm512_mul_ps(p, f1), f2);
  p = _mm512_mask_mov_ps(p, over, _mm512_set1_ps(__builtin_inff()));
  return _mm512_maskz_mov_ps(keep, p);
}

// out[i, i + lanes) of SiluMul, lanes = popcount(m) (16, or the low 8).
inline void SiluMulLanes(const float* gate, const float* up, float* out, __mmask16 m) {
  const __m512 g = _mm512_maskz_loadu_ps(m, gate);
  const __m512 e = Exp16(_mm512_sub_ps(_mm512_setzero_ps(), g));
  const __m512 s = _mm512_div_ps(g, _mm512_add_ps(_mm512_set1_ps(1.0f), e));
  _mm512_mask_storeu_ps(out, m, _mm512_mul_ps(s, _mm512_maskz_loadu_ps(m, up)));
}

}  // namespace

void SiluMul(const float* gate, const float* up, float* out, int64_t n) {
  int64_t i = 0;
  for (; i + 16 <= n; i += 16) SiluMulLanes(gate + i, up + i, out + i, 0xFFFF);
  if (i + 8 <= n) {  // the AVX2 form's last 8-lane step
    SiluMulLanes(gate + i, up + i, out + i, 0x00FF);
    i += 8;
  }
  for (; i < n; ++i) out[i] = gate[i] / (1.0f + std::exp(-gate[i])) * up[i];
}

}  // namespace pg::avx512
