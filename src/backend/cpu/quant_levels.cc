#include "backend/cpu/quant_levels.h"

#include <algorithm>
#include <cmath>

#include "backend/cpu/fp16.h"

namespace pg {
namespace {

// Fills the 32 levels (0..nmax) of x ~ d * q + min and returns {d, min}.
struct MinMaxGrid {
  float d, min;
};
MinMaxGrid FitMinMax(const float* x, int nmax, int* q) {
  float mn = x[0], mx = x[0];
  for (int i = 1; i < kQK; ++i) {
    mn = std::min(mn, x[i]);
    mx = std::max(mx, x[i]);
  }
  const float d = (mx - mn) / static_cast<float>(nmax);
  const float id = d != 0 ? 1.0f / d : 0.0f;
  for (int i = 0; i < kQK; ++i) q[i] = std::min(nmax, static_cast<int>((x[i] - mn) * id + 0.5f));
  return {d, mn};
}

void PackNibbles(const int* q, uint8_t* qs) {
  for (int i = 0; i < kQK / 2; ++i) qs[i] = static_cast<uint8_t>((q[i] & 15) | ((q[i + 16] & 15) << 4));
}

void PackFifthBits(const int* q, uint8_t* qh) {
  uint32_t bits = 0;
  for (int i = 0; i < kQK; ++i) bits |= static_cast<uint32_t>((q[i] >> 4) & 1) << i;
  std::memcpy(qh, &bits, sizeof(bits));
}

}  // namespace

float Mxfp4Scale(uint8_t e) { return std::ldexp(1.0f, static_cast<int>(e) - 128); }

void UnpackScalesQ3K(const uint8_t* scales, int8_t* out16) {
  for (int j = 0; j < 16; ++j) {
    const int lo = j < 8 ? scales[j] & 15 : scales[j - 8] >> 4;
    const int hi = (scales[8 + j % 4] >> (2 * (j / 4))) & 3;
    out16[j] = static_cast<int8_t>((lo | (hi << 4)) - 32);
  }
}

// Q4_1 (levels 0..15) / Q5_1 (0..31, the fifth bits in qh): each block's
// min-max grid, its nibbles and fifth bits.
template <typename Block, int kMaxLevel>
void QuantizeMinMaxRow(const float* src, Block* dst, int64_t n) {
  int q[kQK];
  for (int64_t b = 0; b < n / kQK; ++b) {
    const MinMaxGrid g = FitMinMax(src + b * kQK, kMaxLevel, q);
    dst[b].d = F32ToF16(g.d);
    dst[b].m = F32ToF16(g.min);
    PackNibbles(q, dst[b].qs);
    if constexpr (kMaxLevel == 31) PackFifthBits(q, dst[b].qh);
  }
}

void QuantizeQ4_1Row(const float* src, BlockQ4_1* dst, int64_t n) { QuantizeMinMaxRow<BlockQ4_1, 15>(src, dst, n); }
void QuantizeQ5_1Row(const float* src, BlockQ5_1* dst, int64_t n) { QuantizeMinMaxRow<BlockQ5_1, 31>(src, dst, n); }

// Symmetric: the value of largest magnitude maps to level 0 (q - 16 = -16).
void QuantizeQ5_0Row(const float* src, BlockQ5_0* dst, int64_t n) {
  int q[kQK];
  for (int64_t b = 0; b < n / kQK; ++b) {
    const float* x = src + b * kQK;
    const float maxv = SignedAbsMax(x, kQK);
    const float d = maxv / -16.0f;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    for (int i = 0; i < kQK; ++i) q[i] = std::clamp(static_cast<int>(x[i] * id + 16.5f), 0, 31);
    dst[b].d = F32ToF16(d);
    PackNibbles(q, dst[b].qs);
    PackFifthBits(q, dst[b].qh);
  }
}

void DequantQ4_1(const BlockQ4_1* x, float* y, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b) {
    const float d = F16ToF32(x[b].d), m = F16ToF32(x[b].m);
    for (int i = 0; i < kQK; ++i) y[b * kQK + i] = d * static_cast<float>(NibbleAt(x[b].qs, i)) + m;
  }
}

void DequantQ5_0(const BlockQ5_0* x, float* y, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b) {
    const float d = F16ToF32(x[b].d);
    const uint32_t qh = LoadQh(x[b].qh);
    for (int i = 0; i < kQK; ++i) y[b * kQK + i] = d * static_cast<float>(Q5LevelAt(x[b].qs, qh, i) - 16);
  }
}

void DequantQ5_1(const BlockQ5_1* x, float* y, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b) {
    const float d = F16ToF32(x[b].d), m = F16ToF32(x[b].m);
    const uint32_t qh = LoadQh(x[b].qh);
    for (int i = 0; i < kQK; ++i) y[b * kQK + i] = d * static_cast<float>(Q5LevelAt(x[b].qs, qh, i)) + m;
  }
}

void DequantIQ4_NL(const BlockIQ4_NL* x, float* y, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b) {
    const float d = F16ToF32(x[b].d);
    for (int i = 0; i < kQK; ++i) y[b * kQK + i] = d * kIq4nlValues[NibbleAt(x[b].qs, i)];
  }
}

void DequantMXFP4(const BlockMXFP4* x, float* y, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b) {
    const float d = Mxfp4Scale(x[b].e);
    for (int i = 0; i < kQK; ++i) y[b * kQK + i] = d * kFp4Values[NibbleAt(x[b].qs, i)];
  }
}

void DequantQ2_K(const BlockQ2_K* x, float* y, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b) {
    const float d = F16ToF32(x[b].d), dmin = F16ToF32(x[b].dmin);
    for (int e = 0; e < kQKK; ++e) {
      const uint8_t s = x[b].scales[e / 16];
      y[b * kQKK + e] =
          d * static_cast<float>(s & 15) * static_cast<float>(Q2KLevelAt(x[b], e)) - dmin * static_cast<float>(s >> 4);
    }
  }
}

void DequantQ3_K(const BlockQ3_K* x, float* y, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b) {
    const float d = F16ToF32(x[b].d);
    int8_t sc[16];
    UnpackScalesQ3K(x[b].scales, sc);
    for (int e = 0; e < kQKK; ++e) {
      y[b * kQKK + e] = d * static_cast<float>(sc[e / 16]) * static_cast<float>(Q3KLevelAt(x[b], e) - 4);
    }
  }
}

void DequantIQ4_XS(const BlockIQ4_XS* x, float* y, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b) {
    const float d = F16ToF32(x[b].d);
    for (int j = 0; j < kQKK / 32; ++j) {
      const float dl = d * static_cast<float>(Iq4xsScaleAt(x[b], j));
      for (int i = 0; i < kQK; ++i) y[b * kQKK + 32 * j + i] = dl * kIq4nlValues[NibbleAt(x[b].qs + 16 * j, i)];
    }
  }
}

}  // namespace pg
