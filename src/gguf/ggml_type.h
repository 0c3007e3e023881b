// Tensor element types as numbered in the GGUF format (ggml_type), with the
// block geometry of each quantized type.
//
// A quantized row of n elements is n / block_elems blocks of block_bytes.
// Block layouts (little-endian, packed, as stored in GGUF files):
//   Q8_0 : { f16 d; int8 qs[32]; }                              32 elems, 34 B
//   Q4_0 : { f16 d; uint8 qs[16]; }  x = (nibble - 8) * d       32 elems, 18 B
//   Q4_1 : { f16 d; f16 m; uint8 qs[16]; }  x = nibble * d + m   32 elems, 20 B
//   Q5_0 : { f16 d; uint8 qh[4]; uint8 qs[16]; }  x = (q - 16) * d,
//          q = nibble | (bit i of qh as uint32) << 4              32 elems, 22 B
//   Q5_1 : { f16 d; f16 m; uint8 qh[4]; uint8 qs[16]; }  x = q * d + m  32, 24 B
//          (nibbles: element i < 16 is the low nibble of qs[i], i + 16 the high one)
//   IQ4_NL: { f16 d; uint8 qs[16]; }  x = d * kvalues_iq4nl[nibble]  32 elems, 18 B
//   MXFP4: { uint8 e; uint8 qs[16]; }  x = 2^(e-128) * kvalues_fp4[nibble] 32, 17 B
//          (E8M0 scale; the table holds doubled E2M1 values, hence e - 128)
//   NVFP4: { uint8 d[4]; uint8 qs[32]; }  64 elems, 36 B (4.5 bits per weight):
//          4 sub-blocks of 16, each with a UE4M3 scale d[s] (unsigned E4M3,
//          bias 7; 0x00 and 0x7F read as 0), x = ue4m3(d[s]) / 2 * kvalues_fp4[nibble];
//          qs[8s + j] holds element 16s + j (low nibble) and 16s + 8 + j (high)
//   FP8_E4M3 (prosgrow's own, id 1000; llama.cpp has no such type and refuses
//          files that hold it): { f32 d; uint8 q[64]; }  64 elems, 68 B
//          x = d * e4m3(q), q an OCP E4M3FN byte (sign, 4 exponent bits with
//          bias 7, 3 mantissa bits; 0x7F / 0xFF are NaN). Holds FP8 checkpoint
//          weights at one byte each, their scales (128x128 blocks,
//          per channel or per tensor) folded into d (backend/cpu/fp8_weights.h).
//   Q2_K : { uint8 scales[16]; uint8 qs[64]; f16 d; f16 dmin; }  256 elems, 84 B
//   Q3_K : { uint8 hmask[32]; uint8 qs[64]; uint8 scales[12]; f16 d; }  256, 110 B
//   IQ4_XS: { f16 d; uint16 scales_h; uint8 scales_l[4]; uint8 qs[128]; } 256, 136 B
//   Q4_K : { f16 d; f16 dmin; uint8 scales[12]; uint8 qs[128]; } 256 elems, 144 B
//   Q5_K : { f16 d; f16 dmin; uint8 scales[12]; uint8 qh[32]; uint8 qs[128]; } 256, 176 B
//   Q6_K : { uint8 ql[128]; uint8 qh[64]; int8 scales[16]; f16 d; }  256 elems, 210 B
//   Q8_K : { f32 d; int8 qs[256]; int16 bsums[16]; }  (activations only) 256, 292 B
// backend/cpu/quant.h has the element order inside each block.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace pg {

enum class GgmlType : uint32_t {
  F32 = 0,
  F16 = 1,
  Q4_0 = 2,
  Q4_1 = 3,
  Q5_0 = 6,
  Q5_1 = 7,
  Q8_0 = 8,
  Q8_1 = 9,
  Q2_K = 10,
  Q3_K = 11,
  Q4_K = 12,
  Q5_K = 13,
  Q6_K = 14,
  Q8_K = 15,
  IQ4_NL = 20,
  IQ4_XS = 23,
  I8 = 24,
  I16 = 25,
  I32 = 26,
  I64 = 27,
  F64 = 28,
  BF16 = 30,
  MXFP4 = 39,
  NVFP4 = 40,
  // Types private to prosgrow start at 1000, far from ggml's numbers.
  FP8_E4M3 = 1000,
};

struct GgmlTypeInfo {
  const char* name;
  uint32_t block_elems;  // elements per block (1 for plain types)
  uint32_t block_bytes;  // bytes per block
  bool supported;        // prosgrow can compute with it
};

// Info for a raw type number; nullptr for numbers that are not a known type.
const GgmlTypeInfo* GgmlTypeInfoFor(uint32_t type);

inline const GgmlTypeInfo& InfoOf(GgmlType t) { return *GgmlTypeInfoFor(static_cast<uint32_t>(t)); }
inline const char* TypeName(GgmlType t) { return InfoOf(t).name; }

// Bytes of a row of n elements; n must be a multiple of block_elems.
inline size_t RowBytes(GgmlType t, int64_t n) {
  const auto& i = InfoOf(t);
  return static_cast<size_t>(n / i.block_elems) * i.block_bytes;
}

}  // namespace pg
