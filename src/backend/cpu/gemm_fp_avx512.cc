// AVX-512 (F/BW/VL + VNNI) GEMM tiles for NVFP4 and FP8_E4M3, the AVX2
// tiles' arithmetic (gemm_fp_avx2.cc has the derivations) with the 32 vector
// registers' larger tiles:
//   NVFP4    : 256-bit VPDPBUSD (|w| x sign(x, w), no int16 step), 4 x 4 tile;
//   FP8_E4M3 : 16 weights widened per 512-bit vector straight to f32 (Fp8x16),
//              a block's products summed before its scale (both tiles alike).
#pragma GCC diagnostic ignored "-Wuninitialized"
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#include <immintrin.h>

#include <cstddef>
#include <cstring>

#include "backend/cpu/gemm_tile_walk.h"
#include "backend/cpu/kernel_impls.h"
#include "backend/cpu/quant_fp.h"
#include "backend/cpu/repack.h"
#include "backend/cpu/simd_avx512.h"
#include "base/prefetch.h"

namespace pg::avx512 {
namespace {

inline __m256i NvLevels(const BlockNVFP4* b, int h) {
  const __m128i raw = _mm_loadu_si128(reinterpret_cast<const __m128i*>(b->qs + 16 * h));
  const __m128i m4 = _mm_set1_epi8(0x0F);
  const __m128i lo = _mm_and_si128(raw, m4), hi = _mm_and_si128(_mm_srli_epi16(raw, 4), m4);
  const __m256i nib = _mm256_set_m128i(_mm_unpackhi_epi64(lo, hi), _mm_unpacklo_epi64(lo, hi));
  const __m256i table = _mm256_broadcastsi128_si256(_mm_loadu_si128(reinterpret_cast<const __m128i*>(kFp4Values)));
  return _mm256_shuffle_epi8(table, nib);
}

inline __m256 NvScales(const BlockNVFP4* b, int h) {
  return _mm256_set_m128(_mm_set1_ps(Ue4m3Scale(b->d[2 * h + 1])), _mm_set1_ps(Ue4m3Scale(b->d[2 * h])));
}

template <int RM, int RN>
void TileNVFP4(const uint8_t* wbase, size_t wstride, const uint8_t* xbase, size_t xs, int64_t nb, float* y,
               int64_t ldy) {
  __m256 acc[RM][RN];
  for (int i = 0; i < RM; ++i)
    for (int j = 0; j < RN; ++j) acc[i][j] = _mm256_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    for (int h = 0; h < 2; ++h) {
      __m256 xd[RN];
      __m256i xv[RN];
      for (int j = 0; j < RN; ++j) {
        const BlockQ8_0* xb = reinterpret_cast<const BlockQ8_0*>(xbase + j * xs) + 2 * b + h;
        xd[j] = _mm256_set1_ps(_cvtsh_ss(xb->d));
        xv[j] = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(xb->qs));
      }
      for (int i = 0; i < RM; ++i) {
        const BlockNVFP4* wb = reinterpret_cast<const BlockNVFP4*>(wbase + i * wstride) + b;
        const __m256i w = NvLevels(wb, h);
        const __m256i w_abs = _mm256_abs_epi8(w);
        const __m256 wd = NvScales(wb, h);
        for (int j = 0; j < RN; ++j) {
          const __m256i dot = _mm256_dpbusd_epi32(_mm256_setzero_si256(), w_abs, _mm256_sign_epi8(xv[j], w));
          acc[i][j] = _mm256_fmadd_ps(_mm256_mul_ps(wd, xd[j]), _mm256_cvtepi32_ps(dot), acc[i][j]);
        }
      }
    }
  }
  for (int i = 0; i < RM; ++i)
    for (int j = 0; j < RN; ++j) y[j * ldy + i] = HSum(acc[i][j]);
}

// 16 E4M3 bytes as their f32 values, exactly: the sign-extended byte shifted left by 20 and masked
// puts the sign at bit 31 and the exponent and mantissa at bits 26-20, an f32 of value v * 2^-120
// (E4M3 subnormals land on f32 subnormals; the DAZ bit of MXCSR is off, prosgrow never sets it),
// and the product by 2^120 is exact. Four integer-side operations and one multiply per 16 weights:
// on Zen 5 1.4x the throughput of widening through f16 (vcvtph2ps).
inline __m512 Fp8x16(const uint8_t* q) {
  const __m512i b = _mm512_cvtepi8_epi32(_mm_loadu_si128(reinterpret_cast<const __m128i*>(q)));
  const __m512i v = _mm512_and_si512(_mm512_slli_epi32(b, 20), _mm512_set1_epi32(static_cast<int32_t>(0x87F00000u)));
  return _mm512_mul_ps(_mm512_castsi512_ps(v), _mm512_set1_ps(0x1p120f));
}

inline void Fp8x32(const uint8_t* q, __m512& lo, __m512& hi) {
  lo = Fp8x16(q);
  hi = Fp8x16(q + 16);
}

// Where a tile's rows keep their blocks: row i's block b has its scale at
// d[i] + b * stride and its 64 bytes at q[i] + b * stride (row-major: one
// BlockFP8_E4M3 after another; FP8x4: the rows of a group side by side,
// repack.h). `ahead`: how far on the decode tile prefetches (0: not at all).
template <int RM>
struct Fp8Rows {
  const uint8_t* d[RM];
  const uint8_t* q[RM];
  ptrdiff_t stride;
  ptrdiff_t ahead;
  float Scale(int i, int64_t b) const {
    float v;
    std::memcpy(&v, d[i] + b * stride, sizeof v);
    return v;
  }
  const uint8_t* Q(int i, int64_t b) const { return q[i] + b * stride; }
  // Rows [i0, i0 + N) of these.
  template <int N>
  Fp8Rows<N> Part(int i0) const {
    Fp8Rows<N> p{{}, {}, stride, ahead};
    for (int i = 0; i < N; ++i) p.d[i] = d[i0 + i], p.q[i] = q[i0 + i];
    return p;
  }
};

// Both FP8 tiles compute each (row, token) output the same way, so a token's
// result does not depend on the tile that computed it (batch invariance): a
// block's 64 products accumulate unscaled in 16 lanes (two fused
// multiply-adds per 32 weights, in order), the block's scale d then
// multiplies the block sum once into the row's lanes, and the lanes are
// summed at the end of the row. The layout changes only where the bytes are.
//
// One token (decode) reads each weight once, so DRAM sets the pace. A
// row-major tile's RM rows are RM short streams (a 0.5b-shape row is 14
// blocks, 952 bytes), too short for the hardware prefetcher to reach full
// speed on: each block prefetches the same place `ahead` bytes on (the tiles
// after this one).
template <int RM>
void TileFP8Decode(const Fp8Rows<RM>& w, const float* x, int64_t nb, float* y) {
  __m512 acc[RM];
  for (int i = 0; i < RM; ++i) acc[i] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    __m512 blk[RM];
    for (int i = 0; i < RM; ++i) {
      blk[i] = _mm512_setzero_ps();
      if (w.ahead != 0) PrefetchL1(w.Q(i, b) + w.ahead);
    }
    for (int k = 0; k < kQKNV; k += 32) {
      const __m512 x0 = _mm512_loadu_ps(x + b * kQKNV + k), x1 = _mm512_loadu_ps(x + b * kQKNV + k + 16);
      for (int i = 0; i < RM; ++i) {
        __m512 w0, w1;
        Fp8x32(w.Q(i, b) + k, w0, w1);
        blk[i] = _mm512_fmadd_ps(w1, x1, _mm512_fmadd_ps(w0, x0, blk[i]));
      }
    }
    for (int i = 0; i < RM; ++i) acc[i] = _mm512_fmadd_ps(blk[i], _mm512_set1_ps(w.Scale(i, b)), acc[i]);
  }
  for (int i = 0; i < RM; ++i) y[i] = HSum512(acc[i]);
}

// Several tokens (prefill): the decode tile's arithmetic for RM rows x RN
// tokens, two rows at a time so that the block sums and the row lanes of RN
// tokens stay in registers (the x vectors come again from L1 for the next two).
template <int RM, int RN>
void TileFP8Rows(const Fp8Rows<RM>& w, const uint8_t* xbase, size_t xs, int64_t nb, float* y, int64_t ldy) {
  __m512 acc[RM][RN];
  for (int i = 0; i < RM; ++i)
    for (int j = 0; j < RN; ++j) acc[i][j] = _mm512_setzero_ps();
  for (int64_t b = 0; b < nb; ++b) {
    __m512 blk[RM][RN];
    for (int i = 0; i < RM; ++i)
      for (int j = 0; j < RN; ++j) blk[i][j] = _mm512_setzero_ps();
    for (int k = 0; k < kQKNV; k += 32) {
      __m512 w0[RM], w1[RM];
      for (int i = 0; i < RM; ++i) Fp8x32(w.Q(i, b) + k, w0[i], w1[i]);
      for (int j = 0; j < RN; ++j) {
        const float* xj = reinterpret_cast<const float*>(xbase + j * xs) + b * kQKNV + k;
        const __m512 x0 = _mm512_loadu_ps(xj), x1 = _mm512_loadu_ps(xj + 16);
        for (int i = 0; i < RM; ++i) blk[i][j] = _mm512_fmadd_ps(w1[i], x1, _mm512_fmadd_ps(w0[i], x0, blk[i][j]));
      }
    }
    for (int i = 0; i < RM; ++i) {
      const __m512 d = _mm512_set1_ps(w.Scale(i, b));
      for (int j = 0; j < RN; ++j) acc[i][j] = _mm512_fmadd_ps(blk[i][j], d, acc[i][j]);
    }
  }
  for (int i = 0; i < RM; ++i)
    for (int j = 0; j < RN; ++j) y[j * ldy + i] = HSum512(acc[i][j]);
}

template <int RM, int RN>
void TileFP8(const Fp8Rows<RM>& w, const uint8_t* xbase, size_t xs, int64_t nb, float* y, int64_t ldy) {
  if constexpr (RN == 1) {  // one token: its row of y is y[0..RM)
    TileFP8Decode<RM>(w, reinterpret_cast<const float*>(xbase), nb, y);
  } else if constexpr (RM > 2) {
    TileFP8Rows<2, RN>(w.template Part<2>(0), xbase, xs, nb, y, ldy);
    TileFP8Rows<RM - 2, RN>(w.template Part<RM - 2>(2), xbase, xs, nb, y + 2, ldy);
  } else {
    TileFP8Rows<RM, RN>(w, xbase, xs, nb, y, ldy);
  }
}

// The tiles of [r0, r1) x [t0, t1), `rows(r, rm)` giving rows [r, r + rm).
template <typename RowsAt>
void GemmFP8Tiles(int64_t nb, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1, float* y,
                  int64_t ldy, RowsAt rows) {
  const auto* xbase = static_cast<const uint8_t*>(xa);
  ForEachTile<4, 4>(r0, r1, t0, t1, [&]<int RM, int RN>(int64_t r, int64_t t) {
    TileFP8<RM, RN>(rows.template operator()<RM>(r), xbase + t * xs, xs, nb, y + t * ldy + r, ldy);
  });
}

// The decode prefetch runs two 4-row tiles on, never past r1 (an expert's rows end at its matrix).
inline int64_t TilesAhead(int64_t r, int64_t r1) { return r + 12 <= r1 ? 2 : r + 8 <= r1 ? 1 : 0; }

}  // namespace

void GemmNVFP4(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1,
               float* y, int64_t ldy) {
  const int64_t nb = w.cols / kQKNV;
  const auto* wbase = static_cast<const uint8_t*>(w.data);
  const auto* xbase = static_cast<const uint8_t*>(xa);
  ForEachTile<4, 4>(r0, r1, t0, t1, [&]<int RM, int RN>(int64_t r, int64_t t) {
    TileNVFP4<RM, RN>(wbase + r * w.row_bytes, w.row_bytes, xbase + t * xs, xs, nb, y + t * ldy + r, ldy);
  });
}

void GemmFP8_E4M3(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1,
                  float* y, int64_t ldy) {
  const auto* base = static_cast<const uint8_t*>(w.data);
  const auto row_bytes = static_cast<ptrdiff_t>(w.row_bytes);
  GemmFP8Tiles(w.cols / kQKNV, xa, xs, t0, t1, r0, r1, y, ldy, [&]<int RM>(int64_t r) {
    Fp8Rows<RM> p{{}, {}, sizeof(BlockFP8_E4M3), TilesAhead(r, r1) * 4 * row_bytes + 60};
    if (p.ahead == 60) p.ahead = 0;
    for (int i = 0; i < RM; ++i) {
      p.d[i] = base + (r + i) * row_bytes;
      p.q[i] = p.d[i] + offsetof(BlockFP8_E4M3, q);
    }
    return p;
  });
}

void GemmFP8x4(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1,
               float* y, int64_t ldy) {
  const int64_t nb = w.cols / kQKNV;
  const auto* groups = static_cast<const BlockFP8x4*>(w.data);
  GemmFP8Tiles(nb, xa, xs, t0, t1, r0, r1, y, ldy, [&]<int RM>(int64_t r) {
    const auto group_bytes = static_cast<ptrdiff_t>(nb * sizeof(BlockFP8x4));
    Fp8Rows<RM> p{{}, {}, sizeof(BlockFP8x4), TilesAhead(r, r1) * group_bytes};
    for (int i = 0; i < RM; ++i) {
      const BlockFP8x4* g = groups + (r + i) / kFP8x4Rows * nb;
      const int lane = static_cast<int>((r + i) % kFP8x4Rows);
      p.d[i] = reinterpret_cast<const uint8_t*>(&g->d[lane]);
      p.q[i] = g->q[lane];
    }
    return p;
  });
}

}  // namespace pg::avx512
