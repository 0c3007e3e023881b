// Private: integer levels of the weight formats that MatMul reads through
// generic code (Q4_1, Q5_0, Q5_1, IQ4_NL, MXFP4, Q2_K, Q3_K, IQ4_XS; layouts
// in quant.h), shared by their dequantizers (quant_levels.cc) and scalar dot
// products (gemm_more_scalar.cc) so that both read a block the same way.
//
// Thread-safety: pure functions.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstring>

#include "backend/cpu/quant.h"

namespace pg {

// Element i (0..31) of a 32-block's nibbles: low nibble of qs[i] for i < 16,
// high nibble of qs[i - 16] after.
inline int NibbleAt(const uint8_t* qs, int i) { return i < 16 ? qs[i] & 15 : qs[i - 16] >> 4; }

inline uint32_t LoadQh(const uint8_t* qh) {
  uint32_t v;
  std::memcpy(&v, qh, sizeof(v));
  return v;
}

// Q5_0 / Q5_1 level in [0, 31]: the nibble plus bit i of qh as the fifth bit.
inline int Q5LevelAt(const uint8_t* qs, uint32_t qh, int i) {
  return NibbleAt(qs, i) | static_cast<int>(((qh >> i) & 1u) << 4);
}

// Q2_K level in [0, 3] of element e (0..255).
inline int Q2KLevelAt(const BlockQ2_K& b, int e) {
  const int h = e / 128, k = (e % 128) / 32, i = e % 32;
  return (b.qs[32 * h + i] >> (2 * k)) & 3;
}

// Q3_K level in [0, 7] of element e; the weight is d * scale * (level - 4).
inline int Q3KLevelAt(const BlockQ3_K& b, int e) {
  const int h = e / 128, k = (e % 128) / 32, i = e % 32;
  const int low = (b.qs[32 * h + i] >> (2 * k)) & 3;
  return low | (((b.hmask[i] >> (4 * h + k)) & 1) << 2);
}

// IQ4_XS signed scale (ls - 32) of sub-block j (0..7).
inline int Iq4xsScaleAt(const BlockIQ4_XS& b, int j) {
  const int lo = (b.scales_l[j / 2] >> (4 * (j % 2))) & 15;
  const int hi = (b.scales_h >> (2 * j)) & 3;
  return (lo | (hi << 4)) - 32;
}

// The element of x[0..n) with the largest magnitude, sign kept (the first on
// ties; 0 when all are 0): the symmetric quantizers map it to the extreme level.
inline float SignedAbsMax(const float* x, int n) {
  float amax = 0, maxv = 0;
  for (int i = 0; i < n; ++i) {
    if (std::fabs(x[i]) > amax) {
      amax = std::fabs(x[i]);
      maxv = x[i];
    }
  }
  return maxv;
}

// Row quantizers (n a multiple of 32): each block's min/max grid.
void QuantizeQ4_1Row(const float* src, BlockQ4_1* dst, int64_t n);
void QuantizeQ5_0Row(const float* src, BlockQ5_0* dst, int64_t n);
void QuantizeQ5_1Row(const float* src, BlockQ5_1* dst, int64_t n);

// Dequantizers of nb blocks into y.
void DequantQ4_1(const BlockQ4_1* x, float* y, int64_t nb);
void DequantQ5_0(const BlockQ5_0* x, float* y, int64_t nb);
void DequantQ5_1(const BlockQ5_1* x, float* y, int64_t nb);
void DequantIQ4_NL(const BlockIQ4_NL* x, float* y, int64_t nb);
void DequantMXFP4(const BlockMXFP4* x, float* y, int64_t nb);
void DequantQ2_K(const BlockQ2_K* x, float* y, int64_t nb);
void DequantQ3_K(const BlockQ3_K* x, float* y, int64_t nb);
void DequantIQ4_XS(const BlockIQ4_XS* x, float* y, int64_t nb);

}  // namespace pg
