#include "backend/cpu/quant.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>

#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/fp16.h"
#include "backend/cpu/kernel_impls.h"
#include "backend/cpu/quant_fp.h"
#include "backend/cpu/quant_levels.h"

namespace pg {
namespace {

int RoundToInt(float v) { return static_cast<int>(std::nearbyint(v)); }

// Weighted least-squares fit of x ~ scale * q - min, q in [0, nmax] integers,
// min >= 0, trying a small range of grid scales around the min-max one. Writes
// the levels to q and returns {scale, min}.
struct AffineFit {
  float scale;
  float min;
};
AffineFit FitAffine(const float* x, const float* w, int n, int nmax, uint8_t* q) {
  float mn = x[0], mx = x[0];
  for (int i = 1; i < n; ++i) {
    mn = std::min(mn, x[i]);
    mx = std::max(mx, x[i]);
  }
  if (mn > 0) mn = 0;
  if (mx <= mn) {
    std::memset(q, 0, n);
    return {0.0f, -mn};
  }
  const float range = mx - mn;
  float best_scale = range / nmax, best_b = mn;
  float best_err = 0;
  for (int i = 0; i < n; ++i) {
    const int l = std::clamp(RoundToInt((x[i] - mn) / best_scale), 0, nmax);
    q[i] = static_cast<uint8_t>(l);
    const float e = best_scale * l + mn - x[i];
    best_err += w[i] * e * e;
  }
  uint8_t trial[256];
  for (int step = 0; step <= 20; ++step) {
    const float iscale = (nmax - 1.0f + 0.1f * step) / range;
    float sw = 0, sl = 0, sl2 = 0, sx = 0, sxl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::clamp(RoundToInt(iscale * (x[i] - mn)), 0, nmax);
      trial[i] = static_cast<uint8_t>(l);
      sw += w[i];
      sl += w[i] * l;
      sl2 += w[i] * l * l;
      sx += w[i] * x[i];
      sxl += w[i] * x[i] * l;
    }
    const float det = sw * sl2 - sl * sl;
    if (det <= 0) continue;
    float a = (sw * sxl - sx * sl) / det;
    float b = (sl2 * sx - sl * sxl) / det;
    if (b > 0) {
      b = 0;
      a = sxl / sl2;
    }
    if (!(a > 0)) continue;
    float err = 0;
    for (int i = 0; i < n; ++i) {
      const float e = a * trial[i] + b - x[i];
      err += w[i] * e * e;
    }
    if (err < best_err) {
      best_err = err;
      best_scale = a;
      best_b = b;
      std::memcpy(q, trial, n);
    }
  }
  return {best_scale, -best_b};
}

// Weighted least-squares symmetric fit x ~ scale * q, q in [-nmax, nmax - 1].
float FitSymmetric(const float* x, int n, int nmax) {
  const float maxv = SignedAbsMax(x, n);
  if (maxv == 0) return 0;
  float best = -1, best_scale = 0;
  for (int step = -9; step <= 9; ++step) {
    const float iscale = -(nmax + 0.1f * step) / maxv;
    float sl2 = 0, sxl = 0;
    for (int i = 0; i < n; ++i) {
      const int l = std::clamp(RoundToInt(iscale * x[i]), -nmax, nmax - 1);
      const float w = x[i] * x[i];
      sl2 += w * l * l;
      sxl += w * x[i] * l;
    }
    if (sl2 > 0 && sxl * sxl / sl2 > best) {
      best = sxl * sxl / sl2;
      best_scale = sxl / sl2;
    }
  }
  return best_scale;
}

// Shared by Q4_K (nmax 15) and Q5_K (nmax 31): fills d, dmin, scales and the
// 256 levels L.
void QuantizeSuperK(const float* x, int nmax, uint16_t* d_out, uint16_t* dmin_out, uint8_t* scales_out, uint8_t* L) {
  float scales[8], mins[8], weights[32];
  for (int j = 0; j < 8; ++j) {
    const float* xs = x + 32 * j;
    float ss = 0;
    for (int i = 0; i < 32; ++i) ss += xs[i] * xs[i];
    const float av = std::sqrt(ss / 32);
    for (int i = 0; i < 32; ++i) weights[i] = av + std::fabs(xs[i]);
    const AffineFit f = FitAffine(xs, weights, 32, nmax, L + 32 * j);
    scales[j] = f.scale;
    mins[j] = f.min;
  }
  const float max_scale = *std::max_element(scales, scales + 8);
  const float max_min = *std::max_element(mins, mins + 8);
  const float inv_s = max_scale > 0 ? 63.0f / max_scale : 0.0f;
  const float inv_m = max_min > 0 ? 63.0f / max_min : 0.0f;
  uint8_t sc[8], m[8];
  for (int j = 0; j < 8; ++j) {
    sc[j] = static_cast<uint8_t>(std::min(63, RoundToInt(inv_s * scales[j])));
    m[j] = static_cast<uint8_t>(std::min(63, RoundToInt(inv_m * mins[j])));
  }
  PackScaleMinK4(sc, m, scales_out);
  *d_out = F32ToF16(max_scale / 63.0f);
  *dmin_out = F32ToF16(max_min / 63.0f);
  const float d = F16ToF32(*d_out), dmin = F16ToF32(*dmin_out);
  for (int j = 0; j < 8; ++j) {
    const float dl = d * sc[j], ml = dmin * m[j];
    for (int i = 0; i < 32; ++i) {
      const int l = dl != 0 ? RoundToInt((x[32 * j + i] + ml) / dl) : 0;
      L[32 * j + i] = static_cast<uint8_t>(std::clamp(l, 0, nmax));
    }
  }
}

void QuantizeQ4_0Row(const float* src, BlockQ4_0* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b) {
    const float* x = src + b * kQK;
    const float maxv = SignedAbsMax(x, kQK);
    const float d = maxv / -8.0f;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    dst[b].d = F32ToF16(d);
    for (int i = 0; i < kQK / 2; ++i) {
      const int lo = std::clamp(static_cast<int>(x[i] * id + 8.5f), 0, 15);
      const int hi = std::clamp(static_cast<int>(x[i + 16] * id + 8.5f), 0, 15);
      dst[b].qs[i] = static_cast<uint8_t>(lo | (hi << 4));
    }
  }
}

void QuantizeQ4_KRow(const float* src, BlockQ4_K* dst, int64_t n) {
  uint8_t L[kQKK];
  for (int64_t b = 0; b < n / kQKK; ++b) {
    BlockQ4_K& o = dst[b];
    QuantizeSuperK(src + b * kQKK, 15, &o.d, &o.dmin, o.scales, L);
    for (int c = 0; c < 4; ++c) {
      for (int l = 0; l < 32; ++l) {
        o.qs[32 * c + l] = static_cast<uint8_t>(L[64 * c + l] | (L[64 * c + 32 + l] << 4));
      }
    }
  }
}

void QuantizeQ5_KRow(const float* src, BlockQ5_K* dst, int64_t n) {
  uint8_t L[kQKK];
  for (int64_t b = 0; b < n / kQKK; ++b) {
    BlockQ5_K& o = dst[b];
    QuantizeSuperK(src + b * kQKK, 31, &o.d, &o.dmin, o.scales, L);
    std::memset(o.qh, 0, sizeof(o.qh));
    for (int j = 0; j < 8; ++j) {
      for (int l = 0; l < 32; ++l) {
        if (L[32 * j + l] & 16) o.qh[l] |= static_cast<uint8_t>(1u << j);
      }
    }
    for (int c = 0; c < 4; ++c) {
      for (int l = 0; l < 32; ++l) {
        o.qs[32 * c + l] = static_cast<uint8_t>((L[64 * c + l] & 15) | ((L[64 * c + 32 + l] & 15) << 4));
      }
    }
  }
}

void QuantizeQ6_KRow(const float* src, BlockQ6_K* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const float* x = src + b * kQKK;
    BlockQ6_K& o = dst[b];
    float scales[16];
    float max_abs = 0, max_scale = 0;
    for (int j = 0; j < 16; ++j) {
      scales[j] = FitSymmetric(x + 16 * j, 16, 32);
      if (std::fabs(scales[j]) > max_abs) {
        max_abs = std::fabs(scales[j]);
        max_scale = scales[j];
      }
    }
    int8_t sc[16];
    if (max_abs == 0) {
      std::memset(&o, 0, sizeof(o));
      continue;
    }
    const float iscale = -128.0f / max_scale;
    for (int j = 0; j < 16; ++j) sc[j] = static_cast<int8_t>(std::min(127, RoundToInt(iscale * scales[j])));
    o.d = F32ToF16(1.0f / iscale);
    std::memcpy(o.scales, sc, 16);
    const float d = F16ToF32(o.d);
    uint8_t L[kQKK];
    for (int j = 0; j < 16; ++j) {
      const float dl = d * sc[j];
      for (int i = 0; i < 16; ++i) {
        const int l = dl != 0 ? RoundToInt(x[16 * j + i] / dl) : 0;
        L[16 * j + i] = static_cast<uint8_t>(std::clamp(l, -32, 31) + 32);
      }
    }
    for (int half = 0; half < 2; ++half) {
      uint8_t* ql = o.ql + 64 * half;
      uint8_t* qh = o.qh + 32 * half;
      const uint8_t* Lh = L + 128 * half;
      for (int l = 0; l < 32; ++l) {
        const uint8_t q1 = Lh[l], q2 = Lh[l + 32], q3 = Lh[l + 64], q4 = Lh[l + 96];
        ql[l] = static_cast<uint8_t>((q1 & 0xF) | ((q3 & 0xF) << 4));
        ql[l + 32] = static_cast<uint8_t>((q2 & 0xF) | ((q4 & 0xF) << 4));
        qh[l] = static_cast<uint8_t>((q1 >> 4) | ((q2 >> 4) << 2) | ((q3 >> 4) << 4) | ((q4 >> 4) << 6));
      }
    }
  }
}

void DequantQ8_0(const BlockQ8_0* x, float* y, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b) {
    const float d = F16ToF32(x[b].d);
    for (int i = 0; i < kQK; ++i) y[b * kQK + i] = d * x[b].qs[i];
  }
}

void DequantQ4_0(const BlockQ4_0* x, float* y, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b) {
    const float d = F16ToF32(x[b].d);
    for (int i = 0; i < kQK / 2; ++i) {
      y[b * kQK + i] = d * ((x[b].qs[i] & 15) - 8);
      y[b * kQK + i + 16] = d * ((x[b].qs[i] >> 4) - 8);
    }
  }
}

template <bool kFive, typename Block>
void DequantQ45K(const Block* x, float* y, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b) {
    const Block& blk = x[b];
    const float d = F16ToF32(blk.d), dmin = F16ToF32(blk.dmin);
    for (int j = 0; j < 8; ++j) {
      const auto [dl, ml] = SubScaleK4(blk.scales, j, d, dmin);
      const uint8_t* q = blk.qs + 32 * (j / 2);
      const int shift = (j & 1) * 4;
      for (int l = 0; l < 32; ++l) {
        int v = (q[l] >> shift) & 15;
        if constexpr (kFive) v |= ((reinterpret_cast<const BlockQ5_K&>(blk).qh[l] >> j) & 1) << 4;
        y[b * kQKK + 32 * j + l] = dl * v - ml;
      }
    }
  }
}

void DequantQ6_K(const BlockQ6_K* x, float* y, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b) {
    const BlockQ6_K& blk = x[b];
    const float d = F16ToF32(blk.d);
    for (int half = 0; half < 2; ++half) {
      const uint8_t* ql = blk.ql + 64 * half;
      const uint8_t* qh = blk.qh + 32 * half;
      const int8_t* sc = blk.scales + 8 * half;
      float* yo = y + b * kQKK + 128 * half;
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        yo[l] = d * sc[is] * (((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32);
        yo[l + 32] = d * sc[is + 2] * (((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32);
        yo[l + 64] = d * sc[is + 4] * (((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32);
        yo[l + 96] = d * sc[is + 6] * (((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32);
      }
    }
  }
}

void DequantQ8_K(const BlockQ8_K* x, float* y, int64_t nb) {
  for (int64_t b = 0; b < nb; ++b) {
    for (int i = 0; i < kQKK; ++i) y[b * kQKK + i] = x[b].d * x[b].qs[i];
  }
}

Status CheckRow(GgmlType type, int64_t n, bool allow_q8k) {
  const GgmlTypeInfo* info = GgmlTypeInfoFor(static_cast<uint32_t>(type));
  const bool ok_type = IsSupportedWeightType(type) || (allow_q8k && type == GgmlType::Q8_K);
  if (info == nullptr || !ok_type) {
    return Unimplemented(std::string("quantization type ") + (info ? info->name : "?") + " is not supported");
  }
  if (n < 0 || n % info->block_elems != 0) {
    return InvalidArgument("row of " + std::to_string(n) + " elements is not a multiple of the " + info->name +
                           " block size " + std::to_string(info->block_elems));
  }
  return Status::Ok();
}

}  // namespace

void PackScaleMinK4(const uint8_t* sc, const uint8_t* m, uint8_t* out) {
  std::memset(out, 0, kKScaleBytes);
  for (int j = 0; j < 8; ++j) {
    if (j < 4) {
      out[j] = sc[j];
      out[j + 4] = m[j];
    } else {
      out[j + 4] = static_cast<uint8_t>((sc[j] & 0xF) | ((m[j] & 0xF) << 4));
      out[j - 4] |= static_cast<uint8_t>((sc[j] >> 4) << 6);
      out[j] |= static_cast<uint8_t>((m[j] >> 4) << 6);
    }
  }
}

bool IsSupportedWeightType(GgmlType type) { return WeightKindOf(type) != WeightKind::kCount; }

void QuantizeRowQ8_0(const float* src, BlockQ8_0* dst, int64_t n) { ActiveKernels().quantize_q8_0(src, dst, n); }
void QuantizeRowQ8_K(const float* src, BlockQ8_K* dst, int64_t n) { ActiveKernels().quantize_q8_k(src, dst, n); }

Status QuantizeRow(GgmlType type, const float* src, void* dst, int64_t n) {
  PG_RETURN_IF_ERROR(CheckRow(type, n, false));
  switch (type) {
    case GgmlType::F32: std::memcpy(dst, src, static_cast<size_t>(n) * 4); break;
    case GgmlType::F16: F32ToF16Row(src, static_cast<uint16_t*>(dst), n); break;
    case GgmlType::BF16: F32ToBF16Row(src, static_cast<uint16_t*>(dst), n); break;
    case GgmlType::Q8_0: scalar::QuantizeQ8_0(src, static_cast<BlockQ8_0*>(dst), n); break;
    case GgmlType::Q4_0: QuantizeQ4_0Row(src, static_cast<BlockQ4_0*>(dst), n); break;
    case GgmlType::Q4_1: QuantizeQ4_1Row(src, static_cast<BlockQ4_1*>(dst), n); break;
    case GgmlType::Q5_0: QuantizeQ5_0Row(src, static_cast<BlockQ5_0*>(dst), n); break;
    case GgmlType::Q5_1: QuantizeQ5_1Row(src, static_cast<BlockQ5_1*>(dst), n); break;
    case GgmlType::Q4_K: QuantizeQ4_KRow(src, static_cast<BlockQ4_K*>(dst), n); break;
    case GgmlType::Q5_K: QuantizeQ5_KRow(src, static_cast<BlockQ5_K*>(dst), n); break;
    case GgmlType::Q6_K: QuantizeQ6_KRow(src, static_cast<BlockQ6_K*>(dst), n); break;
    case GgmlType::NVFP4: QuantizeNVFP4Row(src, static_cast<BlockNVFP4*>(dst), n); break;
    case GgmlType::FP8_E4M3: QuantizeFP8Row(src, static_cast<BlockFP8_E4M3*>(dst), n); break;
    default: return Unimplemented(std::string("quantizing to ") + TypeName(type) + " is not supported");
  }
  return Status::Ok();
}

Status DequantizeRow(GgmlType type, const void* src, float* dst, int64_t n) {
  PG_RETURN_IF_ERROR(CheckRow(type, n, true));
  switch (type) {
    case GgmlType::F32: std::memcpy(dst, src, static_cast<size_t>(n) * 4); break;
    case GgmlType::F16: F16ToF32Row(static_cast<const uint16_t*>(src), dst, n); break;
    case GgmlType::BF16: BF16ToF32Row(static_cast<const uint16_t*>(src), dst, n); break;
    case GgmlType::Q8_0: DequantQ8_0(static_cast<const BlockQ8_0*>(src), dst, n / kQK); break;
    case GgmlType::Q4_0: DequantQ4_0(static_cast<const BlockQ4_0*>(src), dst, n / kQK); break;
    case GgmlType::Q4_1: DequantQ4_1(static_cast<const BlockQ4_1*>(src), dst, n / kQK); break;
    case GgmlType::Q5_0: DequantQ5_0(static_cast<const BlockQ5_0*>(src), dst, n / kQK); break;
    case GgmlType::Q5_1: DequantQ5_1(static_cast<const BlockQ5_1*>(src), dst, n / kQK); break;
    case GgmlType::IQ4_NL: DequantIQ4_NL(static_cast<const BlockIQ4_NL*>(src), dst, n / kQK); break;
    case GgmlType::MXFP4: DequantMXFP4(static_cast<const BlockMXFP4*>(src), dst, n / kQK); break;
    case GgmlType::NVFP4: DequantNVFP4(static_cast<const BlockNVFP4*>(src), dst, n / kQKNV); break;
    case GgmlType::FP8_E4M3: DequantFP8(static_cast<const BlockFP8_E4M3*>(src), dst, n / kQKNV); break;
    case GgmlType::Q2_K: DequantQ2_K(static_cast<const BlockQ2_K*>(src), dst, n / kQKK); break;
    case GgmlType::Q3_K: DequantQ3_K(static_cast<const BlockQ3_K*>(src), dst, n / kQKK); break;
    case GgmlType::IQ4_XS: DequantIQ4_XS(static_cast<const BlockIQ4_XS*>(src), dst, n / kQKK); break;
    case GgmlType::Q4_K: DequantQ45K<false>(static_cast<const BlockQ4_K*>(src), dst, n / kQKK); break;
    case GgmlType::Q5_K: DequantQ45K<true>(static_cast<const BlockQ5_K*>(src), dst, n / kQKK); break;
    case GgmlType::Q6_K: DequantQ6_K(static_cast<const BlockQ6_K*>(src), dst, n / kQKK); break;
    case GgmlType::Q8_K: DequantQ8_K(static_cast<const BlockQ8_K*>(src), dst, n / kQKK); break;
    default: return Internal("unreachable quantization type");
  }
  return Status::Ok();
}

}  // namespace pg
