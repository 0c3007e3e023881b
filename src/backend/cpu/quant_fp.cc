#include "backend/cpu/quant_fp.h"

#include <cmath>
#include <cstring>
#include <limits>

namespace pg {
namespace {

// Index of the level of kFp4Values (times d) nearest to x; the first on ties.
int NearestFp4(float x, float d) {
  int best = 0;
  float err = std::fabs(kFp4Values[0] * d - x);
  for (int i = 1; i < 16; ++i) {
    const float e = std::fabs(kFp4Values[i] * d - x);
    if (e < err) {
      best = i;
      err = e;
    }
  }
  return best;
}

}  // namespace

uint8_t F32ToE4m3(float v) {
  if (std::isnan(v)) return 0x7F;
  const uint8_t sign = std::signbit(v) ? 0x80 : 0;
  const float a = std::fabs(v);
  int code;
  if (a >= 448.0f) {
    code = 0x7E;
  } else if (a < std::ldexp(1.0f, -6)) {
    code = static_cast<int>(std::nearbyint(a * 512.0f));  // subnormal steps of 2^-9; 8 is 2^-6
  } else {
    int e;
    std::frexp(a, &e);  // a = f * 2^e, f in [0.5, 1): unbiased exponent e - 1
    const int q = static_cast<int>(std::nearbyint(std::ldexp(a, 4 - e)));  // in [8, 16]
    code = ((e - 1 + 7) << 3) + q - 8;                                     // q == 16 carries into the exponent
    if (code > 0x7E) code = 0x7E;
  }
  return static_cast<uint8_t>(sign | code);
}

uint8_t F32ToUe4m3(float v) {
  if (!(v > 0.0f)) return 0;
  if (v > 448.0f) v = 448.0f;
  uint32_t bits;
  std::memcpy(&bits, &v, sizeof(bits));
  int exp = static_cast<int>((bits >> 23) & 0xFF) - 127 + 7;
  if (exp <= 0) {
    const int m = static_cast<int>(v * 512.0f + 0.5f);
    return static_cast<uint8_t>(m > 7 ? 7 : m);
  }
  // Round to nearest on the first dropped bit (ties away from zero).
  int man = static_cast<int>((bits >> 20) & 7) + static_cast<int>((bits >> 19) & 1);
  if (man > 7) {
    man = 0;
    ++exp;
  }
  if (exp >= 15) return 0x7E;
  return static_cast<uint8_t>((exp << 3) | man);
}

void QuantizeNVFP4Row(const float* src, BlockNVFP4* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQKNV; ++b) {
    for (int s = 0; s < kQKNV / kQKNVSub; ++s) {
      const float* x = src + b * kQKNV + s * kQKNVSub;
      float amax = 0;
      for (int j = 0; j < kQKNVSub; ++j) amax = std::fmax(amax, std::fabs(x[j]));
      dst[b].d[s] = F32ToUe4m3(amax / 6.0f);
      const float d = Ue4m3Scale(dst[b].d[s]);
      for (int j = 0; j < kQKNVSub / 2; ++j) {
        dst[b].qs[8 * s + j] = static_cast<uint8_t>(NearestFp4(x[j], d) | NearestFp4(x[j + 8], d) << 4);
      }
    }
  }
}

void DequantNVFP4(const BlockNVFP4* x, float* y, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b) {
    for (int s = 0; s < kQKNV / kQKNVSub; ++s) {
      const float d = Ue4m3Scale(x[b].d[s]);
      float* out = y + b * kQKNV + s * kQKNVSub;
      for (int j = 0; j < kQKNVSub / 2; ++j) {
        const uint8_t q = x[b].qs[8 * s + j];
        out[j] = d * kFp4Values[q & 15];
        out[j + 8] = d * kFp4Values[q >> 4];
      }
    }
  }
}

void QuantizeFP8Row(const float* src, BlockFP8_E4M3* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQKNV; ++b) {
    const float* x = src + b * kQKNV;
    float amax = 0;
    for (int i = 0; i < kQKNV; ++i) amax = std::fmax(amax, std::fabs(x[i]));
    const float d = amax / 448.0f;
    dst[b].d = d;
    for (int i = 0; i < kQKNV; ++i) dst[b].q[i] = d > 0 ? F32ToE4m3(x[i] / d) : 0;
  }
}

void DequantFP8(const BlockFP8_E4M3* x, float* y, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b) {
    for (int i = 0; i < kQKNV; ++i) y[b * kQKNV + i] = E4m3ToF32(x[b].q[i]) * x[b].d;
  }
}

}  // namespace pg
