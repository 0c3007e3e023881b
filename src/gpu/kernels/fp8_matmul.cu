// FP8 E4M3 products for decode, the expert stacks and the bf16 prefill's
// operand (fp8_matmul.h); GemmFp8 is in fp8_gemm.cu.
#include "gpu/kernels/fp8_matmul.h"
#include "gpu/kernels/warp_rows.cuh"

namespace pg::gpu {
namespace {

constexpr int kThreads = 128;

// Elements [32c, 32c + 32) of row r (bytes at row), each scale * value.
PG_DEVICE void DecodeFp8Chunk(const uint8_t* row, const float* scales, Fp8Layout layout, int64_t ld, int64_t r,
                              int64_t c, float* out) {
  const float d = Fp8ScaleAt(scales, layout, ld, r, 32 * c);  // one scale covers the 32 (64 | 128 | a row)
  const uint8_t* b = row + 32 * c;
  for (int i = 0; i < 32; ++i) out[i] = d * E4m3ToFloat(b[i]);
}

// MatMulKernel's shape (warp_rows.cuh): one warp per row, tokens [t0, t0 + nt) of block y.
PG_GLOBAL void Fp8MatMulKernel(const uint8_t* w, const float* scales, Fp8Layout layout, int64_t ld, int64_t rows,
                               int64_t cols, const float* x, int64_t ldx, int64_t n_tokens, float* y, int64_t ldy) {
  const int64_t r = WarpRow();
  const int64_t t0 = static_cast<int64_t>(blockIdx.y) * kMatMulTokens;
  if (r >= rows) return;  // whole warps leave together
  auto decode = [&](int64_t c, float* v) {
    DecodeFp8Chunk(w + r * cols, scales, layout, ld, r, c, v);
    return 32;
  };
  WarpRowTile(decode, cols / 32, x + t0 * ldx, ldx, TileTokens(n_tokens - t0), y + t0 * ldy + r, ldy);
}

// GroupedKernel's shape (moe.cu): expert blockIdx.y's rows, kMatMulTokens at a time.
PG_GLOBAL void Fp8GroupedKernel(const uint8_t* w, int64_t mat_bytes, const float* scales, int64_t scale_mat,
                                Fp8Layout layout, int64_t ld, int64_t rows, int64_t cols, const int32_t* offsets,
                                const float* xg, float* yg) {
  const int e = static_cast<int>(blockIdx.y);
  const int64_t r0 = offsets[e], r1 = offsets[e + 1], out = WarpRow();
  if (r0 == r1 || out >= rows) return;
  auto decode = [&](int64_t c, float* v) {
    DecodeFp8Chunk(w + e * mat_bytes + out * cols, scales + e * scale_mat, layout, ld, out, c, v);
    return 32;
  };
  WarpRowGrouped(decode, cols / 32, xg, cols, r0, r1, yg, rows, out);
}

PG_GLOBAL void Fp8DequantBf16Kernel(const uint8_t* w, const float* scales, Fp8Layout layout, int64_t ld, int64_t cols,
                                    uint16_t* out) {
  const int64_t r = blockIdx.x;
  for (int64_t c = threadIdx.x; c < cols; c += blockDim.x) {
    const float v = Fp8ScaleAt(scales, layout, ld, r, c) * E4m3ToFloat(w[r * cols + c]);
    out[r * cols + c] = FloatToBf16(v);
  }
}

}  // namespace

// The shape checks every FP8 launcher shares: whole 32-byte chunks, scales present.
bool Fp8ShapeOk(const DeviceMatrix& w) {
  return w.type == WType::kFP8_E4M3 && w.data && w.scales && w.rows > 0 && w.cols > 0 && w.cols % 32 == 0 &&
         w.row_bytes == w.cols && (w.scale_layout == Fp8Layout::kPerRow || w.scale_ld > 0);
}

gpuError_t Fp8MatMul(const DeviceMatrix& w, const float* x, int64_t ldx, int64_t n_tokens, float* y, int64_t ldy,
                     gpuStream_t s) {
  if (!Fp8ShapeOk(w) || n_tokens < 0 || ldx < w.cols || ldy < w.rows) return gpuErrorInvalidValue;
  if (n_tokens == 0) return gpuSuccess;
  const int64_t rows_per_block = kThreads / PgHostWarpSize();
  const dim3 grid(static_cast<unsigned>((w.rows + rows_per_block - 1) / rows_per_block),
                  static_cast<unsigned>((n_tokens + kMatMulTokens - 1) / kMatMulTokens));
  PG_LAUNCH(Fp8MatMulKernel, grid, kThreads, 0, s, static_cast<const uint8_t*>(w.data), w.scales, w.scale_layout,
            w.scale_ld, w.rows, w.cols, x, ldx, n_tokens, y, ldy);
  return gpuGetLastError();
}

gpuError_t Fp8GroupedMatMul(const DeviceMatrix& w, int32_t n_expert, const int32_t* offsets, const float* xg,
                            int64_t max_rows, float* yg, gpuStream_t s) {
  if (!Fp8ShapeOk(w) || n_expert <= 0 || w.mat_bytes < w.rows * w.cols) return gpuErrorInvalidValue;
  if (max_rows == 0) return gpuSuccess;
  const int64_t per_block = kThreads / PgHostWarpSize();
  const dim3 grid(static_cast<unsigned>((w.rows + per_block - 1) / per_block), static_cast<unsigned>(n_expert));
  PG_LAUNCH(Fp8GroupedKernel, grid, kThreads, 0, s, static_cast<const uint8_t*>(w.data), w.mat_bytes, w.scales,
            w.scale_mat, w.scale_layout, w.scale_ld, w.rows, w.cols, offsets, xg, yg);
  return gpuGetLastError();
}

gpuError_t Fp8DequantToBf16(const DeviceMatrix& w, uint16_t* out, gpuStream_t s) {
  if (!Fp8ShapeOk(w)) return gpuErrorInvalidValue;
  PG_LAUNCH(Fp8DequantBf16Kernel, dim3(static_cast<unsigned>(w.rows)), kThreads, 0, s,
            static_cast<const uint8_t*>(w.data), w.scales, w.scale_layout, w.scale_ld, w.cols, out);
  return gpuGetLastError();
}

}  // namespace pg::gpu
