// Private: horizontal sums shared by the *_avx512.cc kernels. Include only
// from files compiled with the AVX-512 flags (F/BW/VL/DQ).
#pragma once

#include <immintrin.h>

// Internal linkage (an unnamed namespace): files compiled for different ISAs
// include this header, and an out-of-line copy built with one ISA's flags must
// never be linked into another's (an AVX-512 encoding run on an AVX2-only CPU).
namespace pg::avx512 {
namespace {  // NOLINT(build/namespaces): see above

inline float HSum256(__m256 v) {
  __m128 s = _mm_add_ps(_mm256_castps256_ps128(v), _mm256_extractf128_ps(v, 1));
  s = _mm_add_ps(s, _mm_movehl_ps(s, s));
  s = _mm_add_ss(s, _mm_movehdup_ps(s));
  return _mm_cvtss_f32(s);
}

// Own reduction: GCC 12's _mm512_reduce_add_ps trips -Wmaybe-uninitialized.
inline float HSum512(__m512 v) {
  return HSum256(_mm256_add_ps(_mm512_castps512_ps256(v), _mm512_maskz_extractf32x8_ps(0xFF, v, 1)));
}

}  // namespace
}  // namespace pg::avx512
