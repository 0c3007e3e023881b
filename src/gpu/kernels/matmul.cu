// Device matrix products (matmul.h).
#include "gpu/kernels/fp8_matmul.h"
#include "gpu/kernels/gemm_tile.cuh"
#include "gpu/kernels/matmul.h"
#include "gpu/kernels/warp_rows.cuh"
#include "gpu/kernels/wtype_launch.cuh"

namespace pg::gpu {
namespace {

constexpr int kThreads = 128;

// One warp per row (WarpRow), tokens [t0, t0 + nt) of this block's tile
// (blockIdx.y); warp_rows.cuh has the loop.
template <WType T>
PG_GLOBAL void MatMulKernel(const uint8_t* w, int64_t row_bytes, int64_t rows, int64_t cols, const float* x,
                            int64_t ldx, int64_t n_tokens, float* y, int64_t ldy) {
  const int64_t r = WarpRow();
  const int64_t t0 = static_cast<int64_t>(blockIdx.y) * kMatMulTokens;
  if (r >= rows) return;  // whole warps leave together
  const uint8_t* row = w + r * row_bytes;
  auto decode = [&](int64_t c, float* v) {
    const int n = static_cast<int>(cols - 32 * c < 32 ? cols - 32 * c : 32);
    DecodeChunk<T>(row, c, n, v);
    return n;
  };
  WarpRowTile(decode, (cols + 31) / 32, x + t0 * ldx, ldx, TileTokens(n_tokens - t0), y + t0 * ldy + r, ldy);
}

template <WType T>
PG_GLOBAL void DequantBf16Kernel(const uint8_t* w, int64_t row_bytes, int64_t cols, uint16_t* out) {
  const int64_t r = blockIdx.x;
  const int64_t chunks = (cols + 31) / 32;
  for (int64_t c = threadIdx.x; c < chunks; c += blockDim.x) {
    float v[32];
    const int n = static_cast<int>(cols - 32 * c < 32 ? cols - 32 * c : 32);
    DecodeChunk<T>(w + r * row_bytes, c, n, v);
    for (int k = 0; k < n; ++k) out[r * cols + 32 * c + k] = FloatToBf16(v[k]);
  }
}

PG_GLOBAL void RoundBf16Kernel(const float* x, uint16_t* out, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) out[i] = FloatToBf16(x[i]);
}

#if !PG_HAVE_BLAS
// Our BF16 GEMM (gemm_tile.cuh), standing in for cuBLAS.
PG_GLOBAL void GemmBf16Kernel(const uint16_t* w, const uint16_t* x, float* y, int64_t m, int64_t n, int64_t k) {
  __shared__ float ws[kTile][kDepth + 1];  // W tile: rows m0.., depth k0..
  __shared__ float xs[kTile][kDepth + 1];  // x tile: rows n0..
  auto w_at = [&](int64_t r, int64_t c) { return Bf16ToFloat(w[r * k + c]); };
  auto x_at = [&](int64_t t, int64_t c) { return Bf16ToFloat(x[t * k + c]); };
  GemmTiles(w_at, x_at, ws, xs, y, m, n, k);
}
#endif

bool ShapeOk(const DeviceMatrix& w) {
  const int64_t block = WTypeBlockElems(w.type);
  return w.data && w.rows > 0 && w.cols > 0 && w.cols % block == 0 && w.row_bytes >= WTypeRowBytes(w.type, w.cols);
}

}  // namespace

gpuError_t MatMul(const DeviceMatrix& w, const float* x, int64_t ldx, int64_t n_tokens, float* y, int64_t ldy,
                  gpuStream_t s) {
  if (w.type == WType::kFP8_E4M3) return Fp8MatMul(w, x, ldx, n_tokens, y, ldy, s);
  if (!ShapeOk(w) || n_tokens < 0 || ldx < w.cols || ldy < w.rows) return gpuErrorInvalidValue;
  if (n_tokens == 0) return gpuSuccess;
  const int64_t rows_per_block = kThreads / PgHostWarpSize();
  const dim3 grid(static_cast<unsigned>((w.rows + rows_per_block - 1) / rows_per_block),
                  static_cast<unsigned>((n_tokens + kMatMulTokens - 1) / kMatMulTokens));
  const uint8_t* wd = static_cast<const uint8_t*>(w.data);
  PG_LAUNCH_PER_WTYPE(w.type, MatMulKernel, grid, kThreads, s, wd, w.row_bytes, w.rows, w.cols, x, ldx, n_tokens, y,
                      ldy)
  return gpuGetLastError();
}

gpuError_t DequantToBf16(const DeviceMatrix& w, uint16_t* out, gpuStream_t s) {
  if (w.type == WType::kFP8_E4M3) return Fp8DequantToBf16(w, out, s);
  if (!ShapeOk(w)) return gpuErrorInvalidValue;
  const uint8_t* wd = static_cast<const uint8_t*>(w.data);
  PG_LAUNCH_PER_WTYPE(w.type, DequantBf16Kernel, dim3(static_cast<unsigned>(w.rows)), kThreads, s, wd, w.row_bytes,
                      w.cols, out)
  return gpuGetLastError();
}

gpuError_t RoundToBf16(const float* x, uint16_t* out, int64_t n, gpuStream_t s) {
  if (n < 0) return gpuErrorInvalidValue;
  if (n == 0) return gpuSuccess;
  PG_LAUNCH(RoundBf16Kernel, dim3(static_cast<unsigned>((n + 255) / 256)), 256, 0, s, x, out, n);
  return gpuGetLastError();
}

gpuError_t GemmBf16(const uint16_t* w, const uint16_t* x, float* y, int64_t m, int64_t n, int64_t k, gpuStream_t s) {
  if (m <= 0 || n < 0 || k <= 0) return gpuErrorInvalidValue;
  if (n == 0) return gpuSuccess;
#if PG_HAVE_BLAS
  // One handle per host thread, bound to the stream of each call.
  thread_local gpublasHandle_t handle = nullptr;
  if (!handle && gpublasCreate(&handle) != GPUBLAS_STATUS_SUCCESS) return gpuErrorLaunchFailure;
  if (gpublasSetStream(handle, s) != GPUBLAS_STATUS_SUCCESS) return gpuErrorInvalidValue;
  const float alpha = 1.0f, beta = 0.0f;
  // Column-major view: y^T (m, n) = (w^T)^T (m, k) * x^T (k, n).
  const auto st =
      gpublasGemmEx(handle, GPUBLAS_OP_T, GPUBLAS_OP_N, static_cast<int>(m), static_cast<int>(n), static_cast<int>(k),
                    &alpha, w, GPU_R_16BF, static_cast<int>(k), x, GPU_R_16BF, static_cast<int>(k), &beta, y, GPU_R_32F,
                    static_cast<int>(m), GPUBLAS_COMPUTE_32F, GPUBLAS_GEMM_DEFAULT);
  return st == GPUBLAS_STATUS_SUCCESS ? gpuSuccess : gpuErrorLaunchFailure;
#else
  const dim3 grid(static_cast<unsigned>((m + kTile - 1) / kTile), static_cast<unsigned>((n + kTile - 1) / kTile));
  PG_LAUNCH(GemmBf16Kernel, grid, kTileThreads, 0, s, w, x, y, m, n, k);
  return gpuGetLastError();
#endif
}

}  // namespace pg::gpu
