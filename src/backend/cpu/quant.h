// Quantized block formats (bit-compatible with GGUF files written by
// llama.cpp) and whole-row quantize / dequantize.
//
// Block layouts (little-endian, packed; see also gguf/ggml_type.h):
//
//   Q8_0 (32 elems, 34 B)   x[i] = d * qs[i]
//   Q4_0 (32 elems, 18 B)   x[i]    = d * ((qs[i] & 15) - 8)     i < 16
//                           x[i+16] = d * ((qs[i] >> 4) - 8)
//   Q4_1 (32 elems, 20 B)   x[i] = d * q[i] + m, q[i] / q[i+16] the low / high
//                           nibble of qs[i] (as Q4_0)
//   Q5_0 (32 elems, 22 B)   x[i] = d * (q[i] - 16), q[i] = nibble as Q4_0 plus
//                           bit i of qh (read as a little-endian uint32) << 4
//   Q5_1 (32 elems, 24 B)   x[i] = d * q[i] + m, q[i] as Q5_0
//   IQ4_NL (32 elems, 18 B) x[i] = d * kIq4nlValues[nibble], nibbles as Q4_0
//   MXFP4 (32 elems, 17 B)  x[i] = 2^(e - 128) * kFp4Values[nibble], nibbles as
//                           Q4_0; e is an E8M0 exponent, the table doubled E2M1
//   NVFP4 (64 elems, 36 B)  4 sub-blocks of 16: x[16s + j] = Ue4m3Scale(d[s]) *
//                           kFp4Values[low nibble of qs[8s + j]], x[16s + 8 + j]
//                           the same with the high nibble (j < 8)
//   FP8_E4M3 (64 elems, 68 B) x[i] = d * E4m3ToF32(q[i]), d an f32
//                           (quant_fp.h; prosgrow's own type, see ggml_type.h)
//   Q2_K (256 elems, 84 B)  16 sub-blocks of 16; scales[j] = sc | m << 4 (4 bits
//                           each); x = d*sc*q - dmin*m, q in [0, 3]. Element
//                           128h + 32k + i (i < 32) is bits 2k..2k+1 of qs[32h + i].
//   Q3_K (256 elems, 110 B) 16 sub-blocks of 16 with 6-bit scales s (12 bytes,
//                           see UnpackScalesQ3K); x = d*(s-32)*(q-4), q = the
//                           2 bits of qs placed as in Q2_K | bit k' of
//                           hmask[i] << 2, k' = 4h + k.
//   IQ4_XS (256 elems, 136 B) 8 sub-blocks of 32, 6-bit scale ls (low 4 bits in
//                           scales_l, high 2 in scales_h); x = d*(ls-32)*
//                           kIq4nlValues[nibble]; sub-block j's nibbles as Q4_0
//                           in qs[16j .. 16j+15].
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

struct BlockQ4_1 {
  uint16_t d;  // f16 scale
  uint16_t m;  // f16 offset (the block minimum)
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ4_1) == 20);

struct BlockQ5_0 {
  uint16_t d;     // f16 scale
  uint8_t qh[4];  // fifth bits, bit i for element i (little-endian uint32)
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ5_0) == 22);

struct BlockQ5_1 {
  uint16_t d;  // f16 scale
  uint16_t m;  // f16 offset
  uint8_t qh[4];
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockQ5_1) == 24);

struct BlockIQ4_NL {
  uint16_t d;  // f16 scale
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockIQ4_NL) == 18);

struct BlockMXFP4 {
  uint8_t e;  // E8M0 shared exponent
  uint8_t qs[kQK / 2];
};
static_assert(sizeof(BlockMXFP4) == 17);

constexpr int kQKNV = 64;     // elements per NVFP4 / FP8_E4M3 block
constexpr int kQKNVSub = 16;  // elements per NVFP4 sub-block (one UE4M3 scale each)

struct BlockNVFP4 {
  uint8_t d[kQKNV / kQKNVSub];  // UE4M3 sub-block scales
  uint8_t qs[kQKNV / 2];        // E2M1 nibbles
};
static_assert(sizeof(BlockNVFP4) == 36);

struct BlockFP8_E4M3 {
  float d;           // f32 block scale
  uint8_t q[kQKNV];  // E4M3FN bytes
};
static_assert(sizeof(BlockFP8_E4M3) == 68);

struct BlockQ2_K {
  uint8_t scales[kQKK / 16];  // sc | m << 4 per 16-element sub-block
  uint8_t qs[kQKK / 4];       // 2-bit levels
  uint16_t d;                 // f16 scale of sc
  uint16_t dmin;              // f16 scale of m
};
static_assert(sizeof(BlockQ2_K) == 84);

struct BlockQ3_K {
  uint8_t hmask[kQKK / 8];  // third bit of each level
  uint8_t qs[kQKK / 4];     // low 2 bits
  uint8_t scales[kKScaleBytes];
  uint16_t d;  // f16 super-block scale
};
static_assert(sizeof(BlockQ3_K) == 110);

struct BlockIQ4_XS {
  uint16_t d;                   // f16 super-block scale
  uint16_t scales_h;            // high 2 bits of the 8 sub-block scales
  uint8_t scales_l[kQKK / 64];  // low 4 bits, two per byte
  uint8_t qs[kQKK / 2];
};
static_assert(sizeof(BlockIQ4_XS) == 136);

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
// BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K, NVFP4, FP8_E4M3. n
// must be a multiple of the block size. K-quants search per-sub-block
// scales/mins to minimize squared error; the 32-blocks use the block's
// min/max; NVFP4 and FP8_E4M3 as quant_fp.h says. Q2_K, Q3_K, IQ4_NL,
// IQ4_XS and MXFP4 are read (DequantizeRow, MatMul) but not written.
Status QuantizeRow(GgmlType type, const float* src, void* dst, int64_t n);

// Dequantizes n elements of a row of `type` into dst: every weight type
// MatMul supports, plus Q8_K.
Status DequantizeRow(GgmlType type, const void* src, float* dst, int64_t n);

// Whether QuantizeRow / DequantizeRow / MatMul handle this weight type.
bool IsSupportedWeightType(GgmlType type);

// Activation quantizers used by MatMul (n a multiple of 32 / 256). Round to
// nearest; the Q8_0 scale is max|x|/127, the Q8_K one -max|x|/128-ish as in
// llama.cpp (so the extreme value maps to -128 or 127 exactly).
void QuantizeRowQ8_0(const float* src, BlockQ8_0* dst, int64_t n);
void QuantizeRowQ8_K(const float* src, BlockQ8_K* dst, int64_t n);

// The 16 levels of IQ4_NL / IQ4_XS and of MXFP4 (E2M1 values times 2), as in ggml.
inline constexpr int8_t kIq4nlValues[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};
inline constexpr int8_t kFp4Values[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// MXFP4 block scale: 2^(e - 128), i.e. half the E8M0 value 2^(e - 127), as an
// exact float (subnormal for e < 2).
float Mxfp4Scale(uint8_t e);

// Q3_K: the 16 signed sub-block scales (s - 32, in [-32, 31]) from scales[12]:
// scale j takes its low 4 bits from byte j % 8 (low nibble for j < 8, high
// nibble after) and its high 2 bits from byte 8 + j % 4, bits 2 * (j / 4).
void UnpackScalesQ3K(const uint8_t* scales, int8_t* out16);

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

// The inverse: packs the 8 sub-blocks' 6-bit scales sc and mins m into scales[12].
void PackScaleMinK4(const uint8_t* sc, const uint8_t* m, uint8_t* out);

// Q4_K / Q5_K sub-block j (32 elements) dequantizes as x = dl * q - ml, with
// dl = d * scale_j and ml = dmin * min_j (GetScaleMinK4 of the block's scales).
struct KSubScale {
  float dl, ml;
};
inline KSubScale SubScaleK4(const uint8_t* scales, int j, float d, float dmin) {
  uint8_t sc, m;
  GetScaleMinK4(j, scales, &sc, &m);
  return {d * sc, dmin * m};
}

}  // namespace pg
