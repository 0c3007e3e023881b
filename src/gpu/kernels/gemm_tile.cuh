// The tiled GEMM loop of our own prefill kernels: GemmBf16Kernel (matmul.cu,
// the builds without cuBLAS) and Fp8GemmKernel (fp8_gemm.cu). Each block
// computes one kTile x kTile tile of y (n, m) = x (n, k) * W (m, k)^T, output
// columns m0.. (blockIdx.x) by rows n0.. (blockIdx.y), through kDepth-deep k
// steps in shared memory; 256 threads, each 4 outputs of one column, with f32
// accumulation in k order.
#pragma once

#include <cstdint>

#include "gpu/runtime/gpu_vendor.h"

namespace pg::gpu {

inline constexpr int kTile = 32, kDepth = 16;  // output tile, k step
inline constexpr int kTileThreads = 256;

// w(r, c), x(t, c): operand values in f32 (r < m, t < n, c < k), decoded on
// their way into the shared tiles ws (rows m0..) and xs (rows n0..), which the
// kernel declares __shared__ float [kTile][kDepth + 1].
template <typename W, typename X>
PG_DEVICE void GemmTiles(W w, X x, float (*ws)[kDepth + 1], float (*xs)[kDepth + 1], float* y, int64_t m, int64_t n,
                         int64_t k) {
  const int64_t m0 = static_cast<int64_t>(blockIdx.x) * kTile, n0 = static_cast<int64_t>(blockIdx.y) * kTile;
  const int tid = static_cast<int>(threadIdx.x);
  const int col = tid % kTile, row4 = (tid / kTile) * 4;  // output (n0 + row4 + i, m0 + col)
  float acc[4] = {};
  for (int64_t k0 = 0; k0 < k; k0 += kDepth) {
    for (int i = tid; i < kTile * kDepth; i += blockDim.x) {
      const int rr = i / kDepth, kk = i % kDepth;
      const int64_t c = k0 + kk;
      const bool kin = c < k;
      ws[rr][kk] = (m0 + rr < m && kin) ? w(m0 + rr, c) : 0.0f;
      xs[rr][kk] = (n0 + rr < n && kin) ? x(n0 + rr, c) : 0.0f;
    }
    __syncthreads();
    for (int kk = 0; kk < kDepth; ++kk) {
      const float wv = ws[col][kk];
      for (int i = 0; i < 4; ++i) acc[i] += xs[row4 + i][kk] * wv;
    }
    __syncthreads();
  }
  for (int i = 0; i < 4; ++i) {
    if (n0 + row4 + i < n && m0 + col < m) y[(n0 + row4 + i) * m + m0 + col] = acc[i];
  }
}

}  // namespace pg::gpu
