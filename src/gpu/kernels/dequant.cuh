// Device-side decoding of the six weight types the GPU kernels read in
// their GGUF form (block layouts: backend/cpu/quant.h), 32 elements at a
// time: one Q8_0 block, one 32-element sub-block of a Q4_K / Q6_K
// super-block, or 32 consecutive F32 / F16 / BF16 values (F32: the small
// routers and indexer head weights some files keep unrounded). The values are exactly
// DequantizeRow's (the CPU reference): the same products in f32.
#pragma once

#include <cstdint>

#include "gpu/runtime/gpu_vendor.h"

namespace pg::gpu {

// The weight types decoded in the kernels (GgmlType numbers). kFP8_E4M3 is
// not a GGUF block type on the device: its kernels are kernels/fp8_matmul.h's
// (bytes and scales as kernels/fp8.cuh says).
enum class WType : uint32_t { kF32 = 0, kF16 = 1, kQ8_0 = 8, kQ4_K = 12, kQ6_K = 14, kBF16 = 30, kFP8_E4M3 = 1000 };

// Bytes of `chunks` 32-element chunks of a row of type T (rows are whole chunks,
// except F16 / BF16 rows, whose last chunk may be partial).
PG_HOST_DEVICE int64_t WTypeRowBytes(WType t, int64_t cols) {
  switch (t) {
    case WType::kF32: return cols * 4;
    case WType::kF16:
    case WType::kBF16: return cols * 2;
    case WType::kQ8_0: return cols / 32 * 34;
    case WType::kQ4_K: return cols / 256 * 144;
    case WType::kQ6_K: return cols / 256 * 210;
    case WType::kFP8_E4M3: return cols;
  }
  return 0;
}

PG_DEVICE float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu;
  const uint32_t man = h & 0x3ffu;
  if (exp == 0x1f) return PgBitsToFloat(sign | 0x7f800000u | (man << 13));
  if (exp != 0) return PgBitsToFloat(sign | ((exp + 112u) << 23) | (man << 13));
  const float v = static_cast<float>(man) * 5.9604644775390625e-08f;  // subnormal: man * 2^-24
  return sign ? -v : v;
}
PG_DEVICE float Bf16ToFloat(uint16_t h) { return PgBitsToFloat(static_cast<uint32_t>(h) << 16); }
PG_DEVICE uint16_t FloatToBf16(float f) {
  const uint32_t u = PgFloatToBits(f);
  if ((u & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((u >> 16) | 0x40u);
  return static_cast<uint16_t>((u + 0x7fffu + ((u >> 16) & 1u)) >> 16);
}
// f32 -> f16, round to nearest even (as backend/cpu/fp16.h's F32ToF16).
PG_DEVICE uint16_t FloatToHalf(float f) {
  const uint32_t u = PgFloatToBits(f);
  const uint16_t sign = static_cast<uint16_t>((u >> 16) & 0x8000u);
  const uint32_t a = u & 0x7fffffffu;
  if (a >= 0x7f800000u) return static_cast<uint16_t>(sign | 0x7c00u | (a > 0x7f800000u ? 0x200u : 0u));
  if (a >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
  if (a < 0x38800000u) {
    if (a < 0x33000000u) return sign;
    const uint32_t e = a >> 23;
    const uint32_t m = (a & 0x7fffffu) | 0x800000u;
    const uint32_t shift = 126u - e;
    uint32_t r = m >> shift;
    const uint32_t rem = m & ((1u << shift) - 1u);
    const uint32_t half = 1u << (shift - 1u);
    if (rem > half || (rem == half && (r & 1u))) ++r;
    return static_cast<uint16_t>(sign | r);
  }
  uint32_t r = (a - 0x38000000u) >> 13;
  const uint32_t rem = a & 0x1fffu;
  if (rem > 0x1000u || (rem == 0x1000u && (r & 1u))) ++r;
  return static_cast<uint16_t>(sign | r);
}

PG_DEVICE uint16_t Load16(const uint8_t* p) { return static_cast<uint16_t>(p[0] | (p[1] << 8)); }

// Q4_K's 6-bit scale and min of sub-block j (0..7) from scales[12].
PG_DEVICE void ScaleMinK4(int j, const uint8_t* q, int* sc, int* m) {
  if (j < 4) {
    *sc = q[j] & 63;
    *m = q[j + 4] & 63;
  } else {
    *sc = (q[j + 4] & 0xF) | ((q[j - 4] >> 6) << 4);
    *m = (q[j + 4] >> 4) | ((q[j] >> 6) << 4);
  }
}

// out[0..n) = elements [32c, 32c + n) of `row` (n = 32 except a half row's tail).
template <WType T>
PG_DEVICE void DecodeChunk(const uint8_t* row, int64_t c, int n, float* out) {
  if constexpr (T == WType::kF32) {
    const float* p = reinterpret_cast<const float*>(row) + c * 32;
    for (int i = 0; i < n; ++i) out[i] = p[i];
  } else if constexpr (T == WType::kF16 || T == WType::kBF16) {
    const uint8_t* p = row + c * 64;
    for (int i = 0; i < n; ++i) {
      const uint16_t h = Load16(p + 2 * i);
      out[i] = T == WType::kF16 ? HalfToFloat(h) : Bf16ToFloat(h);
    }
  } else if constexpr (T == WType::kQ8_0) {
    const uint8_t* b = row + c * 34;
    const float d = HalfToFloat(Load16(b));
    for (int i = 0; i < 32; ++i) out[i] = d * static_cast<int8_t>(b[2 + i]);
  } else if constexpr (T == WType::kQ4_K) {
    const uint8_t* b = row + (c / 8) * 144;
    const int j = static_cast<int>(c % 8);
    const float d = HalfToFloat(Load16(b)), dmin = HalfToFloat(Load16(b + 2));
    int sc, m;
    ScaleMinK4(j, b + 4, &sc, &m);
    const float dl = d * sc, ml = dmin * m;
    const uint8_t* q = b + 16 + 32 * (j / 2);
    const int shift = (j & 1) * 4;
    for (int l = 0; l < 32; ++l) out[l] = dl * ((q[l] >> shift) & 15) - ml;
  } else {  // Q6_K: ql[128] qh[64] scales[16] d
    const uint8_t* b = row + (c / 8) * 210;
    const int j = static_cast<int>(c % 8), half = j / 4, k = j % 4;
    const uint8_t* ql = b + 64 * half + 32 * (k & 1);
    const uint8_t* qh = b + 128 + 32 * half;
    const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192) + 8 * half + 2 * k;
    const float d = HalfToFloat(Load16(b + 208));
    for (int l = 0; l < 32; ++l) {
      const int lo = k < 2 ? (ql[l] & 0xF) : (ql[l] >> 4);
      const int q = lo | (((qh[l] >> (2 * k)) & 3) << 4);
      out[l] = d * sc[l / 16] * (q - 32);
    }
  }
}

}  // namespace pg::gpu
