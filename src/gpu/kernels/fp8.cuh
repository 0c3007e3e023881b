// FP8 (E4M3FN) on the device: the byte <-> f32 conversions and where an FP8
// matrix's scales sit. An FP8 matrix on the device (DeviceMatrix with type
// WType::kFP8_E4M3, kernels/matmul.h) is the checkpoint's E4M3 bytes, one per
// weight, row-major (row_bytes = cols), and f32 scales in one of three layouts:
//
//   kPerRow    scales[r]: per-channel checkpoints, and per-tensor ones (the one
//              value repeated per row, the form cuBLASLt's OUTER_VEC_32F reads)
//   kBlock128  scales[(r / 128) * scale_ld + c / 128]: DeepSeek-V3 / Qwen3-FP8 /
//              GLM FP8 128x128 blocks, scale_ld = ceil(cols / 128) rounded up to
//              4 (cuBLASLt's BLK128x128_32F layout)
//   kBlock64   scales[r * scale_ld + c / 64], scale_ld = cols / 64: any other
//              FP8_E4M3 matrix (the CPU's packed form, one scale per 64 weights)
//
// w[r][c] = scale * E4m3ToFloat(byte), in f32, exactly as the CPU's
// DequantizeRow of the packed FP8_E4M3 blocks (backend/cpu/fp8_weights.h).
#pragma once

#include <cstdint>
#include <cstring>

#include "gpu/runtime/gpu_vendor.h"

namespace pg::gpu {

// Bit casts for host and device code alike (gpu_vendor.h's are device-only under nvcc).
PG_HOST_DEVICE float Fp8BitsToFloat(uint32_t u) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return __uint_as_float(u);
#else
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
#endif
}
PG_HOST_DEVICE uint32_t Fp8FloatToBits(float f) {
#if defined(__CUDA_ARCH__) || defined(__HIP_DEVICE_COMPILE__)
  return __float_as_uint(f);
#else
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
#endif
}

enum class Fp8Layout : uint32_t { kPerRow = 0, kBlock128 = 1, kBlock64 = 2 };

// The value of an E4M3FN byte (exact in f32). 0x7F / 0xFF (NaN) are never
// stored: the loader refuses them (PackFp8E4M3).
PG_HOST_DEVICE float E4m3ToFloat(uint8_t b) {
  const uint32_t sign = static_cast<uint32_t>(b & 0x80u) << 24;
  const uint32_t e = (b >> 3) & 0xFu, m = b & 7u;
  if (e == 0) {
    const float v = static_cast<float>(m) * 0.001953125f;  // m * 2^-9
    return sign ? -v : v;
  }
  return Fp8BitsToFloat(sign | ((e + 120u) << 23) | (m << 20));
}

// The E4M3FN byte nearest to f (ties to the even code), saturating to +-448,
// NaN to 0x7F: backend/cpu/quant_fp.h's F32ToE4m3, in integer steps.
PG_HOST_DEVICE uint8_t FloatToE4m3(float f) {
  const uint32_t u = Fp8FloatToBits(f);
  const auto sign = static_cast<uint8_t>((u >> 24) & 0x80u);
  const uint32_t a = u & 0x7fffffffu;
  if (a > 0x7f800000u) return 0x7F;
  if (a >= 0x43e00000u) return static_cast<uint8_t>(sign | 0x7E);  // >= 448
  uint32_t code, rem, half;
  if (a >= 0x3c800000u) {  // >= 2^-6: normal; drop 20 mantissa bits, rebias 127 -> 7
    code = (a >> 20) - (120u << 3);
    rem = a & 0xfffffu;
    half = 0x80000u;
  } else {                              // subnormal: steps of 2^-9
    if (a <= 0x3a800000u) return sign;  // <= 2^-10: rounds to 0 (the tie to the even 0)
    const uint32_t e = a >> 23, full = (a & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 141u - e;  // full * 2^(e - 141) = a * 2^9
    code = full >> shift;
    rem = full & ((1u << shift) - 1u);
    half = 1u << (shift - 1u);
  }
  if (rem > half || (rem == half && (code & 1u))) ++code;
  if (code > 0x7Eu) code = 0x7Eu;
  return static_cast<uint8_t>(sign | code);
}

// The scale of weight (r, c) of a matrix whose scales start at s.
PG_HOST_DEVICE float Fp8ScaleAt(const float* s, Fp8Layout layout, int64_t ld, int64_t r, int64_t c) {
  switch (layout) {
    case Fp8Layout::kPerRow: return s[r];
    case Fp8Layout::kBlock128: return s[(r >> 7) * ld + (c >> 7)];
    case Fp8Layout::kBlock64: return s[r * ld + (c >> 6)];
  }
  return 0.0f;
}

}  // namespace pg::gpu
