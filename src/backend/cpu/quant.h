// Quantized block formats (bit-compatible with GGUF files written by
// llama.cpp) and whole-row quantize / dequantize.
//
// Block layouts (little-endian, packed; see also gguf/ggml_type.h):
//
//   Q8_0 (32 elems, 34 B)   x[i] = d * qs[i]
//   Q4_0 (32 elems, 18 B)   x[i]    = d * ((qs[i] & 15) - 8)     i < 16
//                           x[i+16] = d * ((qs[i] >> 4) - 8)
//   Q4_K (256 elems, 144 B) 8 sub-blocks of 32, each with a 6-bit scale sc and
//                           6-bit min m packed in scales[12];
//                           x = d*sc*q - dmin*m, q a 4-bit value. qs holds
//                           4 groups of 32 bytes: low nibbles are sub-block
//                           2j, high nibbles sub-block 2j+1.
//   Q5_K (256 elems, 176 B) as Q4_K plus a fifth bit per value in qh[32]:
//                           bit j of qh[l] belongs to sub-block j, element l.
//   Q6_K (256 elems, 210 B) 16 sub-blocks of 16 with int8 scales; x = d*sc*(q-32),
//                           q = 4 low bits (ql) | 2 high bits (qh) << 4.
//   Q8_K (256 elems, 292 B) activations only: f32 d, int8 qs, and bsums[16] =
//                           sums of each 16 consecutive qs.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

#include "base/status.h"
#include "gguf/ggml_type.h"

namespace pg {

constexpr int kQK = 32;    // elements per Q8_0 / Q4_0 block
constexpr int kQKK = 256;  // elements per K-quant super-block
constexpr int kKScaleBytes = 12;

struct BlockQ8_0 {
  uint16_t d;  // f16 scale
  int8_t qs[kQK];
};
static_assert(sizeof(BlockQ8_0) == 34);

struct BlockQ4_0 {
  uint16_t d;  // f16 scale
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ4_0) == 18);

struct BlockQ4_K {
  uint16_t d;     // f16 super-block scale for the sub-block scales
  uint16_t dmin;  // f16 super-block scale for the sub-block mins
  uint8_t scales[kKScaleBytes];
  uint8_t qs[kQKK / 2];
};
static_assert(sizeof(BlockQ4_K) == 144);

struct BlockQ5_K {
  uint16_t d;
  uint16_t dmin;
  uint8_t scales[kKScaleBytes];
  uint8_t qh[kQKK / 8];
  uint8_t qs[kQKK / 2];
};
static_assert(sizeof(BlockQ5_K) == 176);

struct BlockQ6_K {
  uint8_t ql[kQKK / 2];      // low 4 bits
  uint8_t qh[kQKK / 4];      // high 2 bits
  int8_t scales[kQKK / 16];  // 16 sub-block scales
  uint16_t d;                // f16 super-block scale
};
static_assert(sizeof(BlockQ6_K) == 210);

struct BlockQ8_K {
  float d;
  int8_t qs[kQKK];
  int16_t bsums[kQKK / 16];
};
static_assert(sizeof(BlockQ8_K) == 292);

// Quantizes n floats into dst (RowBytes(type, n) bytes). Types: F32, F16,
// BF16, Q8_0, Q4_0, Q4_K, Q5_K, Q6_K. n must be a multiple of the block size.
// K-quants search per-sub-block scales/mins to minimize squared error.
Status QuantizeRow(GgmlType type, const float* src, void* dst, int64_t n);

// Dequantizes n elements of a row of `type` into dst. Same types as
// QuantizeRow, plus Q8_K.
Status DequantizeRow(GgmlType type, const void* src, float* dst, int64_t n);

// Whether QuantizeRow / DequantizeRow / MatMul handle this weight type.
bool IsSupportedWeightType(GgmlType type);

// Activation quantizers used by MatMul (n a multiple of 32 / 256). Round to
// nearest; the Q8_0 scale is max|x|/127, the Q8_K one -max|x|/128-ish as in
// llama.cpp (so the extreme value maps to -128 or 127 exactly).
void QuantizeRowQ8_0(const float* src, BlockQ8_0* dst, int64_t n);
void QuantizeRowQ8_K(const float* src, BlockQ8_K* dst, int64_t n);

// K-quant 6-bit scale/min unpacking: sub-block j (0..7) of scales[12].
inline void GetScaleMinK4(int j, const uint8_t* q, uint8_t* sc, uint8_t* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = static_cast<uint8_t>((q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4));
    *m = static_cast<uint8_t>((q[j + 4] >> 4) | ((q[j - 0] >> 6) << 4));
  }
}

}  // namespace pg
