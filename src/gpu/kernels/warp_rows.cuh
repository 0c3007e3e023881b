// One warp per output row: the loop that MatMulKernel (matmul.cu), the FP8
// products (fp8_matmul.cu) and the expert products (moe.cu) share. Lanes
// stride over the row's 32-element chunks; each lane keeps one partial sum per
// token of a tile of up to kMatMulTokens tokens, and the warp adds them up.
//
//   decode(c, v): fills v[0..n) with chunk c of the row, returns n (<= 32)
//   x:            the tile's first token, row t at x + t * ldx
//   y:            this row's output for the tile's first token, token t at y + t * ldy
#pragma once

#include <cstdint>

#include "gpu/kernels/matmul.h"
#include "gpu/kernels/reduce.cuh"

namespace pg::gpu {

// This warp's row: warp threadIdx.x / warp width of block blockIdx.x.
PG_DEVICE int64_t WarpRow() {
  const int ws = PgWarpSize();
  return static_cast<int64_t>(blockIdx.x) * (blockDim.x / ws) + threadIdx.x / ws;
}

// Tokens in a tile with `left` tokens to go: at most kMatMulTokens.
PG_DEVICE int TileTokens(int64_t left) { return static_cast<int>(left < kMatMulTokens ? left : kMatMulTokens); }

// y[t * ldy] = sum over the row's `chunks` chunks of chunk . x[t * ldx], for
// t < nt, in the same order on every run: per lane by chunk, then WarpSum.
template <typename Decode>
PG_DEVICE void WarpRowTile(Decode decode, int64_t chunks, const float* x, int64_t ldx, int nt, float* y, int64_t ldy) {
  float acc[kMatMulTokens] = {};
  for (int64_t c = PgLaneId(); c < chunks; c += PgWarpSize()) {
    float v[32];
    const int n = decode(c, v);
    for (int t = 0; t < nt; ++t) {
      const float* xt = x + t * ldx + 32 * c;
      float d = 0.0f;
      for (int k = 0; k < n; ++k) d += v[k] * xt[k];
      acc[t] += d;
    }
  }
  for (int t = 0; t < nt; ++t) {
    const float sum = WarpSum(acc[t]);
    if (PgLaneId() == 0) y[t * ldy] = sum;
  }
}

// An expert's rows [r0, r1) of xg (width cols) a tile at a time, into column
// `out` of yg (width rows): GroupedKernel's and Fp8GroupedKernel's loop.
template <typename Decode>
PG_DEVICE void WarpRowGrouped(Decode decode, int64_t chunks, const float* xg, int64_t cols, int64_t r0, int64_t r1,
                              float* yg, int64_t rows, int64_t out) {
  for (int64_t t0 = r0; t0 < r1; t0 += kMatMulTokens)
    WarpRowTile(decode, chunks, xg + t0 * cols, cols, TileTokens(r1 - t0), yg + t0 * rows + out, rows);
}

}  // namespace pg::gpu
