// Scalar reference versions of the activation quantizers, the block dot
// products and the GEMM tiles (see matmul.h, cpu_kernels.h).
#include <cmath>
#include <cstdlib>
#include <type_traits>

#include "backend/cpu/fp16.h"
#include "backend/cpu/gemm_tile.h"
#include "backend/cpu/kernel_impls.h"
#include "backend/cpu/quant_levels.h"
#include "backend/cpu/repack.h"

namespace pg::scalar {

void QuantizeQ8_0(const float* src, BlockQ8_0* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQK; ++b) {
    const float* x = src + b * kQK;
    float amax = 0;
    for (int i = 0; i < kQK; ++i) amax = std::fmax(amax, std::fabs(x[i]));
    const float d = amax / 127.0f;
    const float id = d != 0 ? 1.0f / d : 0.0f;
    dst[b].d = F32ToF16(d);
    for (int i = 0; i < kQK; ++i) dst[b].qs[i] = static_cast<int8_t>(std::nearbyint(x[i] * id));
  }
}

void QuantizeQ8_K(const float* src, BlockQ8_K* dst, int64_t n) {
  for (int64_t b = 0; b < n / kQKK; ++b) {
    const float* x = src + b * kQKK;
    BlockQ8_K& o = dst[b];
    float amax = 0, mx = 0;
    for (int i = 0; i < kQKK; ++i) {
      const float a = std::fabs(x[i]);
      if (a > amax) {
        amax = a;
        mx = x[i];
      }
    }
    if (amax == 0) {
      o.d = 0;
      for (int i = 0; i < kQKK; ++i) o.qs[i] = 0;
      for (int j = 0; j < kQKK / 16; ++j) o.bsums[j] = 0;
      continue;
    }
    // The value of largest magnitude maps to -128 (so +127 never overflows).
    const float iscale = -128.0f / mx;
    for (int i = 0; i < kQKK; ++i) {
      const int v = static_cast<int>(std::nearbyint(iscale * x[i]));
      o.qs[i] = static_cast<int8_t>(v > 127 ? 127 : v);
    }
    for (int j = 0; j < kQKK / 16; ++j) {
      int s = 0;
      for (int i = 0; i < 16; ++i) s += o.qs[16 * j + i];
      o.bsums[j] = static_cast<int16_t>(s);
    }
    o.d = 1.0f / iscale;
  }
}

namespace {

int LevelQ8_0(const BlockQ8_0& b, int i) { return b.qs[i]; }
int LevelQ4_0(const BlockQ4_0& b, int i) { return NibbleAt(b.qs, i) - 8; }

}  // namespace

float DotQ8_0(const BlockQ8_0* w, const BlockQ8_0* x, int64_t nb) {
  return DotSigned<BlockQ8_0, LevelQ8_0, F16Scale<BlockQ8_0>>(w, x, nb);
}
float DotQ4_0(const BlockQ4_0* w, const BlockQ8_0* x, int64_t nb) {
  return DotSigned<BlockQ4_0, LevelQ4_0, F16Scale<BlockQ4_0>>(w, x, nb);
}

// Q4_K / Q5_K: sum_j sc_j * d * sum(q * x) - dmin * sum_j m_j * sum(x) over 8 sub-blocks of 32.
template <bool kFive, typename Block>
float DotQ45K(const Block* w, const BlockQ8_K* x, int64_t nb) {
  float sum = 0;
  for (int64_t b = 0; b < nb; ++b) {
    const Block& wb = w[b];
    const BlockQ8_K& xb = x[b];
    int sumi = 0, summ = 0;
    for (int j = 0; j < 8; ++j) {
      uint8_t sc, m;
      GetScaleMinK4(j, wb.scales, &sc, &m);
      const uint8_t* q = wb.qs + 32 * (j / 2);
      const int shift = (j & 1) * 4;
      int s = 0;
      for (int l = 0; l < 32; ++l) {
        int v = (q[l] >> shift) & 15;
        if constexpr (kFive) {
          v |= ((reinterpret_cast<const BlockQ5_K&>(wb).qh[l] >> j) & 1) << 4;
        }
        s += v * xb.qs[32 * j + l];
      }
      sumi += sc * s;
      summ += m * (xb.bsums[2 * j] + xb.bsums[2 * j + 1]);
    }
    sum += xb.d * (F16ToF32(wb.d) * static_cast<float>(sumi) - F16ToF32(wb.dmin) * static_cast<float>(summ));
  }
  return sum;
}

float DotQ4_K(const BlockQ4_K* w, const BlockQ8_K* x, int64_t nb) { return DotQ45K<false>(w, x, nb); }
float DotQ5_K(const BlockQ5_K* w, const BlockQ8_K* x, int64_t nb) { return DotQ45K<true>(w, x, nb); }

float DotQ6_K(const BlockQ6_K* w, const BlockQ8_K* x, int64_t nb) {
  float sum = 0;
  for (int64_t b = 0; b < nb; ++b) {
    const BlockQ6_K& wb = w[b];
    const BlockQ8_K& xb = x[b];
    int sumi = 0;
    for (int half = 0; half < 2; ++half) {
      const uint8_t* ql = wb.ql + 64 * half;
      const uint8_t* qh = wb.qh + 32 * half;
      const int8_t* sc = wb.scales + 8 * half;
      const int8_t* xq = xb.qs + 128 * half;
      for (int l = 0; l < 32; ++l) {
        const int is = l / 16;
        const int q1 = ((ql[l] & 0xF) | (((qh[l] >> 0) & 3) << 4)) - 32;
        const int q2 = ((ql[l + 32] & 0xF) | (((qh[l] >> 2) & 3) << 4)) - 32;
        const int q3 = ((ql[l] >> 4) | (((qh[l] >> 4) & 3) << 4)) - 32;
        const int q4 = ((ql[l + 32] >> 4) | (((qh[l] >> 6) & 3) << 4)) - 32;
        sumi += sc[is + 0] * q1 * xq[l] + sc[is + 2] * q2 * xq[l + 32] + sc[is + 4] * q3 * xq[l + 64] +
                sc[is + 6] * q4 * xq[l + 96];
      }
    }
    sum += xb.d * F16ToF32(wb.d) * static_cast<float>(sumi);
  }
  return sum;
}

namespace {
float DotF32Row(const float* w, const float* x, int64_t n) { return DotF32(w, x, n); }
float DotF16Row(const uint16_t* w, const float* x, int64_t n) { return DotF16(w, x, n); }
float DotBF16Row(const uint16_t* w, const float* x, int64_t n) { return DotBF16(w, x, n); }
}  // namespace

PG_GEMM_AS(GemmF32, (GemmByDot<float, float, DotF32Row>), 1)
PG_GEMM_AS(GemmF16, (GemmByDot<uint16_t, float, DotF16Row>), 1)
PG_GEMM_AS(GemmBF16, (GemmByDot<uint16_t, float, DotBF16Row>), 1)
PG_GEMM_AS(GemmQ8_0, (GemmByDot<BlockQ8_0, BlockQ8_0, DotQ8_0>), kQK)
PG_GEMM_AS(GemmQ4_0, (GemmByDot<BlockQ4_0, BlockQ8_0, DotQ4_0>), kQK)
PG_GEMM_AS(GemmQ4_K, (GemmByDot<BlockQ4_K, BlockQ8_K, DotQ4_K>), kQKK)
PG_GEMM_AS(GemmQ5_K, (GemmByDot<BlockQ5_K, BlockQ8_K, DotQ5_K>), kQKK)
PG_GEMM_AS(GemmQ6_K, (GemmByDot<BlockQ6_K, BlockQ8_K, DotQ6_K>), kQKK)

// The scalar references of the 8-row layouts' kernels: for each row r (lane
// r % 8 of its group) and token t, acc = step(group block, lane, token block,
// acc) over the nb blocks in order, then y[t * ldy + r] = acc.
template <typename Block, typename XBlock, typename Step>
void GemmX8Reference(const WeightMatrix& w, int64_t block_cols, const void* xa, size_t xs, int64_t t0, int64_t t1,
                     int64_t r0, int64_t r1, float* y, int64_t ldy, Step step) {
  const int64_t nb = w.cols / block_cols;
  const auto* groups = static_cast<const Block*>(w.data);
  for (int64_t r = r0; r < r1; ++r) {
    const Block* g = groups + (r / 8) * nb;
    const int lane = static_cast<int>(r % 8);
    for (int64_t t = t0; t < t1; ++t) {
      const auto* x = reinterpret_cast<const XBlock*>(static_cast<const uint8_t*>(xa) + t * xs);
      float acc = 0;
      for (int64_t b = 0; b < nb; ++b) acc = step(g[b], lane, x[b], acc);
      y[t * ldy + r] = acc;
    }
  }
}

// Q8_0x8 (repack.h): per row and token, each block's products summed exactly
// in int32, then acc = fma(d_w * d_x, sum, acc), blocks in order. The SIMD
// kernels do the same operations, so their results are bit-identical.
void GemmQ8_0x8(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1,
                float* y, int64_t ldy) {
  auto step = [](const BlockQ8_0x8& g, int lane, const BlockQ8_0& x, float acc) {
    int32_t isum = 0;
    for (int k = 0; k < kQK / 4; ++k)
      for (int i = 0; i < 4; ++i) isum += g.qs[kQK * k + 4 * lane + i] * x.qs[4 * k + i];
    return std::fma(F16ToF32(g.d[lane]) * F16ToF32(x.d), static_cast<float>(isum), acc);
  };
  GemmX8Reference<BlockQ8_0x8, BlockQ8_0>(w, kQK, xa, xs, t0, t1, r0, r1, y, ldy, step);
}

// Q5_0x8 (repack.h): per row and token, each block's levels q - 16 summed
// exactly in int32, then one FMA, blocks in order: the arithmetic of Q5_0
// repacked as Q8_0x8, so the same bits.
void GemmQ5_0x8(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1,
                float* y, int64_t ldy) {
  auto step = [](const BlockQ5_0x8& g, int lane, const BlockQ8_0& x, float acc) {
    int32_t isum = 0;
    for (int k = 0; k < kQK / 8; ++k)
      for (int h = 0; h < 2; ++h)
        for (int i = 0; i < 4; ++i) {
          const uint8_t byte = g.qs[32 * k + 4 * lane + i];
          const int nibble = h == 0 ? (byte & 0x0F) : (byte >> 4);
          const int low = static_cast<int>((g.low16[k][h] >> (4 * lane + i)) & 1u);
          isum += (nibble - 16 * low) * x.qs[16 * h + 4 * k + i];
        }
    return std::fma(F16ToF32(g.d[lane]) * F16ToF32(x.d), static_cast<float>(isum), acc);
  };
  GemmX8Reference<BlockQ5_0x8, BlockQ8_0>(w, kQK, xa, xs, t0, t1, r0, r1, y, ldy, step);
}

// Q4_Kx8 / Q5_Kx8 (repack.h): per row and token, each super-block summed
// exactly in int32, then two FMAs, super-blocks in order (levels 0..15, or
// 0..31 with Q5_Kx8's fifth bits). The SIMD kernels do the same operations,
// so their results are bit-identical.
template <typename Block>
float StepK4x8(const Block& g, int lane, const BlockQ8_K& x, float acc) {
  int32_t isum = 0, msum = 0;
  for (int j = 0; j < 8; ++j) {
    int32_t s = 0;
    for (int l = 0; l < kQK; ++l) {
      const int at = 32 * (l / 4) + 4 * lane + l % 4;
      int v = (g.qs[256 * (j / 2) + at] >> (4 * (j % 2))) & 15;
      if constexpr (std::is_same_v<Block, BlockQ5_Kx8>) v |= ((g.qh[at] >> j) & 1) << 4;
      s += v * x.qs[32 * j + l];
    }
    isum += g.sc[j][lane] * s;
    msum += g.m[j / 2][lane][j % 2] * (x.bsums[2 * j] + x.bsums[2 * j + 1]);
  }
  const float xd = x.d;
  acc = std::fma(F16ToF32(g.d[lane]) * xd, static_cast<float>(isum), acc);
  return std::fma(-(F16ToF32(g.dmin[lane]) * xd), static_cast<float>(msum), acc);
}

void GemmQ4_Kx8(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1,
                float* y, int64_t ldy) {
  GemmX8Reference<BlockQ4_Kx8, BlockQ8_K>(w, kQKK, xa, xs, t0, t1, r0, r1, y, ldy, StepK4x8<BlockQ4_Kx8>);
}

void GemmQ5_Kx8(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1,
                float* y, int64_t ldy) {
  GemmX8Reference<BlockQ5_Kx8, BlockQ8_K>(w, kQKK, xa, xs, t0, t1, r0, r1, y, ldy, StepK4x8<BlockQ5_Kx8>);
}

// Q6_Kx8 (repack.h): per row and token, isum = sum_j sc_j (q . x)_j -
// 32 sum_j sc_j bsum_j exactly in int32, then one FMA per super-block.
void GemmQ6_Kx8(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1,
                float* y, int64_t ldy) {
  auto step = [](const BlockQ6_Kx8& g, int lane, const BlockQ8_K& x, float acc) {
    int32_t sj[16] = {};
    // Element e = 128h + 64hi + 32c + 4k + i.
    for (int e = 0; e < kQKK; ++e) {
      const int h = e / 128, hi = (e / 64) % 2, c = (e / 32) % 2, k = (e % 32) / 4, i = e % 4;
      const uint8_t lb = g.ql[512 * h + 256 * c + 32 * k + 4 * lane + i];
      const uint8_t hb = g.qh[256 * h + 32 * k + 4 * lane + i];
      const int q = (hi ? lb >> 4 : lb & 15) | (((hb >> (2 * c + 4 * hi)) & 3) << 4);
      sj[e / 16] += q * x.qs[e];
    }
    int32_t isum = 0, msum = 0;
    for (int j = 0; j < 16; ++j) {
      isum += g.sc[j][lane] * sj[j];
      msum += g.sc[j][lane] * x.bsums[j];
    }
    return std::fma(F16ToF32(g.d[lane]) * x.d, static_cast<float>(isum - 32 * msum), acc);
  };
  GemmX8Reference<BlockQ6_Kx8, BlockQ8_K>(w, kQKK, xa, xs, t0, t1, r0, r1, y, ldy, step);
}

// Half4 (repack.h): the same double-accumulated dot as row-major, element by
// element in column order, so the results are those of GemmF16 / GemmBF16.
template <float (*ToF32)(uint16_t)>
void GemmHalf4(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1,
               float* y, int64_t ldy) {
  const auto* base = static_cast<const uint16_t*>(w.data);
  for (int64_t r = r0; r < r1; ++r) {
    const uint16_t* g = base + (r / kHalf4Rows) * kHalf4Rows * w.cols + kHalf4Cols * (r % kHalf4Rows);
    for (int64_t t = t0; t < t1; ++t) {
      const auto* x = reinterpret_cast<const float*>(static_cast<const uint8_t*>(xa) + t * xs);
      double s = 0;
      for (int64_t c = 0; c < w.cols; ++c) {
        s += static_cast<double>(ToF32(g[kHalf4Rows * (c - c % kHalf4Cols) + c % kHalf4Cols])) * x[c];
      }
      y[t * ldy + r] = static_cast<float>(s);
    }
  }
}

PG_GEMM_AS(GemmF16Half4, GemmHalf4<F16ToF32>)
PG_GEMM_AS(GemmBF16Half4, GemmHalf4<BF16ToF32>)

}  // namespace pg::scalar
