// Private: horizontal sums shared by the *_avx512.cc kernels. Include only
// from files compiled with the AVX-512 flags (F/BW/VL/DQ), which include the
// AVX2 ones: the 256-bit sum is simd_avx2.h's HSum.
#pragma once

#include <immintrin.h>

#include "backend/cpu/simd_avx2.h"

// Internal linkage (an unnamed namespace): files compiled for different ISAs
// include this header, and an out-of-line copy built with one ISA's flags must
// never be linked into another's (an AVX-512 encoding run on an AVX2-only CPU).
namespace pg::avx512 {
namespace {  // NOLINT(build/namespaces): see above

using avx2::HSum;

// Own reduction: GCC 12's _mm512_reduce_add_ps trips -Wmaybe-uninitialized.
inline float HSum512(__m512 v) {
  return HSum(_mm256_add_ps(_mm512_castps512_ps256(v), _mm512_maskz_extractf32x8_ps(0xFF, v, 1)));
}

}  // namespace
}  // namespace pg::avx512
