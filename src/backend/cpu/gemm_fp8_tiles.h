// Private: the FP8_E4M3 GEMM tiles of every SIMD level, over a vector type V
// (gemm_fp_avx512.cc: 16 f32 lanes, gemm_fp_avx2.cc: 8), for the row-major
// layout and FP8x4 (repack.h). Holds no intrinsics; include only from a file
// compiled for V's ISA. Internal linkage (an unnamed namespace), as
// simd_avx2.h: a copy built with one ISA's flags must never be linked into
// another's.
//
// V provides: T (the vector), kLanes, Zero(), Load(const float*), Set1(float),
// Fma(a, b, c) = a * b + c rounded once, Widen(q) (kLanes
// E4M3 bytes as their exact f32 values), HSum(T).
//
// Arithmetic (the same for every tile shape, so a token's result does not
// depend on the batch it ran in): per row and token, a block's 64 products
// accumulate unscaled in kLanes lanes (two fused multiply-adds per 2 * kLanes
// weights, in order), the block's scale d then multiplies the block sum once
// into the row's lanes, and the lanes are summed at the end of the row
// (V::HSum). The layout changes only where the bytes are.
//
// One token (decode) reads each weight once, so DRAM sets the pace: each block
// prefetches the same place `ahead` bytes on (the tiles after this one).
// Several tokens (prefill) run two rows at a time, so that the block sums and
// the row lanes of the tokens stay in registers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "backend/cpu/gemm_tile_walk.h"
#include "backend/cpu/quant.h"
#include "backend/cpu/repack.h"
#include "base/prefetch.h"

namespace pg::fp8_tiles {
namespace {  // NOLINT(build/namespaces): see above

// Where a tile's rows keep their blocks: row i's block b has its scale at
// d[i] + b * stride and its 64 bytes at q[i] + b * stride. `ahead`: how far on
// the decode tile prefetches (0: not at all).
template <int RM>
struct Rows {
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
  template <int N>
  Rows<N> Part(int i0) const {  // rows [i0, i0 + N)
    Rows<N> p{{}, {}, stride, ahead};
    for (int i = 0; i < N; ++i) p.d[i] = d[i0 + i], p.q[i] = q[i0 + i];
    return p;
  }
};

template <typename V, int RM>
void Decode(const Rows<RM>& w, const float* x, int64_t nb, float* y) {
  typename V::T acc[RM];
  for (int i = 0; i < RM; ++i) acc[i] = V::Zero();
  for (int64_t b = 0; b < nb; ++b) {
    typename V::T blk[RM];
    for (int i = 0; i < RM; ++i) {
      blk[i] = V::Zero();
      if (w.ahead != 0) PrefetchL1(w.Q(i, b) + w.ahead);
    }
    for (int k = 0; k < kQKNV; k += 2 * V::kLanes) {
      const typename V::T x0 = V::Load(x + b * kQKNV + k), x1 = V::Load(x + b * kQKNV + k + V::kLanes);
      for (int i = 0; i < RM; ++i)
        blk[i] = V::Fma(V::Widen(w.Q(i, b) + k + V::kLanes), x1, V::Fma(V::Widen(w.Q(i, b) + k), x0, blk[i]));
    }
    for (int i = 0; i < RM; ++i) acc[i] = V::Fma(blk[i], V::Set1(w.Scale(i, b)), acc[i]);
  }
  for (int i = 0; i < RM; ++i) y[i] = V::HSum(acc[i]);
}

template <typename V, int RM, int RN>
void Prefill(const Rows<RM>& w, const uint8_t* xbase, size_t xs, int64_t nb, float* y, int64_t ldy) {
  typename V::T acc[RM][RN];
  for (int i = 0; i < RM; ++i)
    for (int j = 0; j < RN; ++j) acc[i][j] = V::Zero();
  for (int64_t b = 0; b < nb; ++b) {
    typename V::T blk[RM][RN];
    for (int i = 0; i < RM; ++i)
      for (int j = 0; j < RN; ++j) blk[i][j] = V::Zero();
    for (int k = 0; k < kQKNV; k += 2 * V::kLanes) {
      typename V::T w0[RM], w1[RM];
      for (int i = 0; i < RM; ++i) w0[i] = V::Widen(w.Q(i, b) + k), w1[i] = V::Widen(w.Q(i, b) + k + V::kLanes);
      for (int j = 0; j < RN; ++j) {
        const float* xj = reinterpret_cast<const float*>(xbase + j * xs) + b * kQKNV + k;
        const typename V::T x0 = V::Load(xj), x1 = V::Load(xj + V::kLanes);
        for (int i = 0; i < RM; ++i) blk[i][j] = V::Fma(w1[i], x1, V::Fma(w0[i], x0, blk[i][j]));
      }
    }
    for (int i = 0; i < RM; ++i) {
      const typename V::T d = V::Set1(w.Scale(i, b));
      for (int j = 0; j < RN; ++j) acc[i][j] = V::Fma(blk[i][j], d, acc[i][j]);
    }
  }
  for (int i = 0; i < RM; ++i)
    for (int j = 0; j < RN; ++j) y[j * ldy + i] = V::HSum(acc[i][j]);
}

template <typename V, int RM, int RN>
void Tile(const Rows<RM>& w, const uint8_t* xbase, size_t xs, int64_t nb, float* y, int64_t ldy) {
  if constexpr (RN == 1) {  // one token: its row of y is y[0..RM)
    Decode<V, RM>(w, reinterpret_cast<const float*>(xbase), nb, y);
  } else if constexpr (RM > 2) {
    Prefill<V, 2, RN>(w.template Part<2>(0), xbase, xs, nb, y, ldy);
    Prefill<V, RM - 2, RN>(w.template Part<RM - 2>(2), xbase, xs, nb, y + 2, ldy);
  } else {
    Prefill<V, RM, RN>(w, xbase, xs, nb, y, ldy);
  }
}

// The decode prefetch runs two 4-row tiles on, never past r1 (an expert's rows end at its matrix).
inline int64_t TilesAhead(int64_t r, int64_t r1) { return r + 12 <= r1 ? 2 : r + 8 <= r1 ? 1 : 0; }

// GemmTileFn for a row-major FP8_E4M3 matrix (4-row tiles of up to RN tokens).
template <typename V, int RN>
void GemmRowMajor(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1,
                  float* y, int64_t ldy) {
  const auto* base = static_cast<const uint8_t*>(w.data);
  const auto* xbase = static_cast<const uint8_t*>(xa);
  const auto row_bytes = static_cast<ptrdiff_t>(w.row_bytes);
  ForEachTile<4, RN>(r0, r1, t0, t1, [&]<int RM, int N>(int64_t r, int64_t t) {
    const int64_t tiles = TilesAhead(r, r1);
    Rows<RM> p{{}, {}, sizeof(BlockFP8_E4M3), tiles > 0 ? tiles * 4 * row_bytes + 60 : 0};
    for (int i = 0; i < RM; ++i) {
      p.d[i] = base + (r + i) * row_bytes;
      p.q[i] = p.d[i] + offsetof(BlockFP8_E4M3, q);
    }
    Tile<V, RM, N>(p, xbase + t * xs, xs, w.cols / kQKNV, y + t * ldy + r, ldy);
  });
}

// GemmTileFn for an FP8x4 matrix.
template <typename V, int RN>
void GemmX4(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1, float* y,
            int64_t ldy) {
  const int64_t nb = w.cols / kQKNV;
  const auto* groups = static_cast<const BlockFP8x4*>(w.data);
  const auto* xbase = static_cast<const uint8_t*>(xa);
  const auto group_bytes = static_cast<ptrdiff_t>(nb * sizeof(BlockFP8x4));
  ForEachTile<4, RN>(r0, r1, t0, t1, [&]<int RM, int N>(int64_t r, int64_t t) {
    Rows<RM> p{{}, {}, sizeof(BlockFP8x4), TilesAhead(r, r1) * group_bytes};
    for (int i = 0; i < RM; ++i) {
      const BlockFP8x4* g = groups + (r + i) / kFP8x4Rows * nb;
      const int lane = static_cast<int>((r + i) % kFP8x4Rows);
      p.d[i] = reinterpret_cast<const uint8_t*>(&g->d[lane]);
      p.q[i] = g->q[lane];
    }
    Tile<V, RM, N>(p, xbase + t * xs, xs, nb, y + t * ldy + r, ldy);
  });
}

}  // namespace
}  // namespace pg::fp8_tiles
