// Half-precision conversions: IEEE binary16 (f16) and bfloat16 (bf16), both
// stored as uint16_t bit patterns.
//
// The scalar converters are exact references: f32 -> f16/bf16 rounds to
// nearest, ties to even; NaN stays NaN (quiet); overflow gives +-inf; f16
// subnormals are produced and read correctly. The row converters dispatch to
// the active SIMD level and give bit-identical results to the scalar ones.
//
// Thread-safety: pure functions.
#pragma once

#include <bit>
#include <cstdint>
#include <cstring>

namespace pg {

inline float BitsToF32(uint32_t u) { return std::bit_cast<float>(u); }
inline uint32_t F32ToBits(float f) { return std::bit_cast<uint32_t>(f); }

inline float F16ToF32(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t man = h & 0x3ffu;
  if (exp == 0x1f) return BitsToF32(sign | 0x7f800000u | (man << 13));  // inf / nan
  if (exp != 0) return BitsToF32(sign | ((exp + 112u) << 23) | (man << 13));
  if (man == 0) return BitsToF32(sign);
  // Subnormal: man * 2^-24, exact in f32.
  const float v = static_cast<float>(man) * 5.9604644775390625e-08f;
  return sign ? -v : v;
}

inline uint16_t F32ToF16(float f) {
  const uint32_t u = F32ToBits(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7fffffffu;
  if (a >= 0x7f800000u) {  // inf or nan
    return static_cast<uint16_t>(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u | ((a >> 13) & 0x3ffu) : 0u));
  }
  if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);  // rounds to >= 2^16: inf
  if (a < 0x38800000u) {
    // Result is subnormal (or zero) in f16: value / 2^-24, rounded to nearest even.
    if (a < 0x33000000u) return sign;  // below half the smallest subnormal
    const uint32_t e = a >> 23;        // 102..112
    const uint32_t m = (a & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - e;  // 14..24
    uint32_t r = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return static_cast<uint16_t>(sign | r);
  }
  // Normal: rebias exponent, round mantissa 23 -> 10 bits (carry may bump exponent).
  uint32_t r = ((a - 0x38000000u) >> 13);
  const uint32_t rem = a & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
  return static_cast<uint16_t>(sign | r);
}

inline float BF16ToF32(uint16_t h) { return BitsToF32(static_cast<uint32_t>(h) << 16); }

inline uint16_t F32ToBF16(float f) {
  const uint32_t u = F32ToBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);  // quiet nan
  const uint32_t r = u + 0x7fffu + ((u >> 16) & 1u);
  return static_cast<uint16_t>(r >> 16);
}

// Row converters (dispatch to the active ISA). dst and src must not overlap.
void F16ToF32Row(const uint16_t* src, float* dst, int64_t n);
void F32ToF16Row(const float* src, uint16_t* dst, int64_t n);
void BF16ToF32Row(const uint16_t* src, float* dst, int64_t n);
void F32ToBF16Row(const float* src, uint16_t* dst, int64_t n);

}  // namespace pg
