// The 8-bit float scalars of the NVFP4 and FP8_E4M3 weight types (block
// layouts in quant.h), and their row quantizers and dequantizers.
//
// E4M3 (OCP E4M3FN): sign, 4 exponent bits with bias 7, 3 mantissa bits;
// e = 0 is subnormal (m * 2^-9); 0x7F / 0xFF are NaN, there is no infinity;
// the largest finite magnitude is 448 (0x7E).
// UE4M3: NVFP4's unsigned sub-block scale, read as ggml reads it: bit 7 is
// ignored, 0x00 and 0x7F give 0, and the value is halved because the E2M1
// level table (kFp4Values) holds doubled values.
//
// Thread-safety: pure functions.
#pragma once

#include <array>
#include <cstdint>
#include <limits>

#include "backend/cpu/quant.h"

namespace pg {
namespace quant_fp_detail {

// The value of an E4M3 magnitude code (0..0x7F, exponent field e, mantissa
// m): m * 2^-9 for e = 0, else (8 + m) * 2^(e - 10). Exact.
constexpr float E4m3Magnitude(int code) {
  const int e = code >> 3, m = code & 7;
  float v = static_cast<float>(e == 0 ? m : 8 + m);
  for (int k = 0; k < (e == 0 ? 9 : 10 - e); ++k) v *= 0.5f;
  for (int k = 0; k < e - 10; ++k) v *= 2.0f;
  return v;
}

constexpr std::array<float, 256> E4m3Values() {
  std::array<float, 256> v{};
  for (int b = 0; b < 256; ++b) {
    const float f = (b & 0x7F) == 0x7F ? std::numeric_limits<float>::quiet_NaN() : E4m3Magnitude(b & 0x7F);
    v[static_cast<size_t>(b)] = (b & 0x80) ? -f : f;
  }
  return v;
}

// Bit 7 is not read (0xFF gives 240); only 0x7F itself reads as 0.
constexpr std::array<float, 256> Ue4m3Halves() {
  std::array<float, 256> v{};
  for (int b = 0; b < 256; ++b) v[static_cast<size_t>(b)] = b == 0x7F ? 0.0f : 0.5f * E4m3Magnitude(b & 0x7F);
  return v;
}

}  // namespace quant_fp_detail

// Every E4M3 byte's value, and every UE4M3 scale byte's halved value.
inline constexpr std::array<float, 256> kE4m3Values = quant_fp_detail::E4m3Values();
inline constexpr std::array<float, 256> kUe4m3Scales = quant_fp_detail::Ue4m3Halves();

// Every E4M3 byte's value (NaN for 0x7F and 0xFF); exact in f32.
inline float E4m3ToF32(uint8_t b) { return kE4m3Values[b]; }
// The E4M3 byte nearest to v (ties to the even code), saturating to +-448;
// NaN maps to 0x7F.
uint8_t F32ToE4m3(float v);

// NVFP4 sub-block scale: the UE4M3 value of b, halved (exact in f32).
inline float Ue4m3Scale(uint8_t b) { return kUe4m3Scales[b]; }
// The UE4M3 byte for a positive scale v (before halving), as ggml's
// reference quantizer rounds it: to nearest with ties away from zero, at
// most 0x7E, 0 for v <= 0; subnormals at most 0x07.
uint8_t F32ToUe4m3(float v);

// NVFP4 row quantizer (n a multiple of 64): per sub-block of 16 the scale
// F32ToUe4m3(amax / 6), then each element the level nearest to x / scale
// (the first on ties), as ggml's reference quantizer does.
void QuantizeNVFP4Row(const float* src, BlockNVFP4* dst, int64_t n);
void DequantNVFP4(const BlockNVFP4* x, float* y, int64_t nb);

// FP8_E4M3 row quantizer (n a multiple of 64): per block d = amax / 448 and
// q = F32ToE4m3(x / d) (all zero for an all-zero block).
void QuantizeFP8Row(const float* src, BlockFP8_E4M3* dst, int64_t n);
void DequantFP8(const BlockFP8_E4M3* x, float* y, int64_t nb);

}  // namespace pg
