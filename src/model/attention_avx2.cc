// AVX2 + F16C + FMA version of AttendOneScalar's f16 path: the same
// operations in the same order, so results are bit-identical.
#include <immintrin.h>

#include <cmath>

#include "backend/cpu/fp16.h"
#include "backend/cpu/simd_avx2.h"
#include "model/attention.h"
#include "model/attention_step.h"

namespace pg {
namespace {

inline void StoreH(uint16_t* p, __m256 v) {
  _mm_storeu_si128(reinterpret_cast<__m128i*>(p), _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT));
}

float DotF16F16(const uint16_t* k, const uint16_t* q, int64_t n) {
  const int64_t np = n & ~int64_t{31};
  __m256 s0 = _mm256_setzero_ps(), s1 = s0, s2 = s0, s3 = s0;
  for (int64_t i = 0; i < np; i += 32) {
    s0 = _mm256_fmadd_ps(avx2::LoadF16(k + i), avx2::LoadF16(q + i), s0);
    s1 = _mm256_fmadd_ps(avx2::LoadF16(k + i + 8), avx2::LoadF16(q + i + 8), s1);
    s2 = _mm256_fmadd_ps(avx2::LoadF16(k + i + 16), avx2::LoadF16(q + i + 16), s2);
    s3 = _mm256_fmadd_ps(avx2::LoadF16(k + i + 24), avx2::LoadF16(q + i + 24), s3);
  }
  double total = 0;
  if (np > 0) {
    __m256 s = _mm256_add_ps(_mm256_add_ps(s0, s2), _mm256_add_ps(s1, s3));
    __m128 t = _mm_add_ps(_mm256_castps256_ps128(s), _mm256_extractf128_ps(s, 1));
    // (t0 + t1) + (t2 + t3)
    __m128 h = _mm_hadd_ps(t, t);
    h = _mm_hadd_ps(h, h);
    total = _mm_cvtss_f32(h);
  }
  for (int64_t i = np; i < n; ++i) total += static_cast<double>(F16ToF32(k[i]) * F16ToF32(q[i]));
  return static_cast<float>(total);
}

}  // namespace

void AttendOneAvx2(const AttentionArgs& a, const float* q, float* out, float* scratch) {
  const int64_t HD = a.head_dim;  // multiple of 8
  alignas(32) uint16_t qh[512];
  alignas(32) uint16_t acc[512];
  for (int64_t d = 0; d < HD; d += 8) {
    StoreH(qh + d, _mm256_loadu_ps(q + d));
    _mm_storeu_si128(reinterpret_cast<__m128i*>(acc + d), _mm_setzero_si128());
  }
  OnlineSoftmax sm;
  for (int64_t j = 0; j < a.n_keys; ++j) {
    const uint16_t* v = HeadRow(a, j, 1);
    if (sm.Step(DotF16F16(HeadRow(a, j, 0), qh, HD) * a.scale)) {
      const __m256 vms = _mm256_set1_ps(sm.rescale);
      for (int64_t d = 0; d < HD; d += 8) StoreH(acc + d, _mm256_mul_ps(avx2::LoadF16(acc + d), vms));
    }
    const __m256 vvs = _mm256_set1_ps(sm.weight);
    for (int64_t d = 0; d < HD; d += 8)
      StoreH(acc + d, _mm256_fmadd_ps(avx2::LoadF16(v + d), vvs, avx2::LoadF16(acc + d)));
  }
  const float inv = sm.InvSum();
  const __m256 vinv = _mm256_set1_ps(inv);
  for (int64_t d = 0; d < HD; d += 8) _mm256_storeu_ps(out + d, _mm256_mul_ps(avx2::LoadF16(acc + d), vinv));
}

}  // namespace pg
