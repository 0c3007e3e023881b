// Private: the scalar RoPE rotation of a range of one head's pairs, in the
// reference's arithmetic (rope.h has the layouts). vec_ops_scalar.cc's
// RopeNorm / RopeNeox are these over every pair; the SIMD kernels run them on
// the pairs past their last full vector.
//
// Internal linkage on purpose: each kernel file compiles its own copy with
// its own ISA flags, so the scalar table never links an AVX2 copy.
#pragma once

#include <cstdint>

namespace pg {
namespace {

// NORM: pairs (v[2i], v[2i + 1]) for i in [i0, i1).
inline void RopeNormPairs(float* v, int64_t i0, int64_t i1, const float* cos, const float* sin) {
  for (int64_t i = i0; i < i1; ++i) {
    const float a = v[2 * i], b = v[2 * i + 1];
    v[2 * i] = a * cos[i] - b * sin[i];
    v[2 * i + 1] = a * sin[i] + b * cos[i];
  }
}

// NEOX: pairs (v[i], v[i + half]) for i in [i0, i1).
inline void RopeNeoxPairs(float* v, int64_t half, int64_t i0, int64_t i1, const float* cos, const float* sin) {
  for (int64_t i = i0; i < i1; ++i) {
    const float a = v[i], b = v[i + half];
    v[i] = a * cos[i] - b * sin[i];
    v[i + half] = a * sin[i] + b * cos[i];
  }
}

}  // namespace
}  // namespace pg
