// Row-wise kernels (elementwise.h). One block per row; threads stride over
// the row's 32-element chunks or elements.
#include "gpu/kernels/elementwise.h"
#include "gpu/kernels/reduce.cuh"
#include "gpu/kernels/wtype_launch.cuh"

namespace pg::gpu {
namespace {

constexpr int kThreads = 128;

template <WType T>
PG_GLOBAL void GetRowsKernel(const uint8_t* table, int64_t row_bytes, int64_t cols, const int32_t* ids, float* out) {
  const int64_t i = blockIdx.x;
  const uint8_t* row = table + static_cast<int64_t>(ids[i]) * row_bytes;
  const int64_t chunks = (cols + 31) / 32;
  for (int64_t c = threadIdx.x; c < chunks; c += blockDim.x) {
    float v[32];
    const int n = static_cast<int>(cols - 32 * c < 32 ? cols - 32 * c : 32);
    DecodeChunk<T>(row, c, n, v);
    for (int k = 0; k < n; ++k) out[i * cols + 32 * c + k] = v[k];
  }
}

PG_GLOBAL void RmsNormKernel(const float* x, float* residual, const float* w, float* y, int64_t n, float eps) {
  __shared__ float scratch[kMaxWarps];
  const int64_t r = blockIdx.x;
  const float* xr = x + r * n;
  float* rr = residual ? residual + r * n : nullptr;
  float ss = 0.0f;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    float h = xr[i];
    if (rr) {
      h += rr[i];
      rr[i] = h;
    }
    ss += h * h;
  }
  ss = BlockSum(ss, scratch);
  const float inv = 1.0f / sqrtf(ss / static_cast<float>(n) + eps);
  const float* hr = rr ? rr : xr;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const float v = hr[i] * inv;
    y[r * n + i] = w ? v * w[i] : v;
  }
}

PG_GLOBAL void AddBiasKernel(float* x, const float* bias, int64_t n) {
  const int64_t r = blockIdx.x;
  for (int64_t i = threadIdx.x; i < n; i += blockDim.x) x[r * n + i] += bias[i];
}

PG_GLOBAL void SiluMulKernel(const float* gate, const float* up, float* out, int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const float g = gate[i];
  out[i] = g / (1.0f + expf(-g)) * up[i];
}

PG_GLOBAL void RopeKernel(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, const int32_t* pos,
                          const float* inv_freq, bool neox) {
  const int64_t t = blockIdx.x, h = blockIdx.y;
  float* v = x + (t * n_heads + h) * head_dim;
  const int64_t half = n_rot / 2;
  for (int64_t i = threadIdx.x; i < half; i += blockDim.x) {
    const double angle = static_cast<double>(pos[t]) * static_cast<double>(inv_freq[i]);
    const float c = static_cast<float>(cos(angle)), sn = static_cast<float>(sin(angle));
    const int64_t ia = neox ? i : 2 * i, ib = neox ? i + half : 2 * i + 1;
    const float a = v[ia], b = v[ib];
    v[ia] = a * c - b * sn;
    v[ib] = a * sn + b * c;
  }
}

}  // namespace

gpuError_t GetRows(WType type, const void* table, int64_t row_bytes, int64_t cols, const int32_t* ids, int64_t n,
                   float* out, gpuStream_t s) {
  const int64_t block = WTypeBlockElems(type);
  if (n < 0 || cols <= 0 || cols % block != 0 || row_bytes < WTypeRowBytes(type, cols)) return gpuErrorInvalidValue;
  if (n == 0) return gpuSuccess;
  const uint8_t* t = static_cast<const uint8_t*>(table);
  const dim3 grid(static_cast<unsigned>(n));
  if (type == WType::kFP8_E4M3) return gpuErrorInvalidValue;  // DeviceWeights keeps an FP8 embedding in BF16
  PG_LAUNCH_PER_WTYPE(type, GetRowsKernel, grid, kThreads, s, t, row_bytes, cols, ids, out)
  return gpuGetLastError();
}

gpuError_t RmsNormResidual(const float* x, float* residual, const float* w, float* y, int64_t rows, int64_t n,
                           float eps, gpuStream_t s) {
  if (rows < 0 || n <= 0) return gpuErrorInvalidValue;
  if (rows == 0) return gpuSuccess;
  PG_LAUNCH(RmsNormKernel, dim3(static_cast<unsigned>(rows)), kThreads, 0, s, x, residual, w, y, n, eps);
  return gpuGetLastError();
}

gpuError_t AddBias(float* x, const float* bias, int64_t rows, int64_t n, gpuStream_t s) {
  if (rows < 0 || n <= 0) return gpuErrorInvalidValue;
  if (rows == 0) return gpuSuccess;
  PG_LAUNCH(AddBiasKernel, dim3(static_cast<unsigned>(rows)), kThreads, 0, s, x, bias, n);
  return gpuGetLastError();
}

gpuError_t SiluMul(const float* gate, const float* up, float* out, int64_t n, gpuStream_t s) {
  if (n < 0) return gpuErrorInvalidValue;
  if (n == 0) return gpuSuccess;
  PG_LAUNCH(SiluMulKernel, dim3(static_cast<unsigned>((n + 255) / 256)), 256, 0, s, gate, up, out, n);
  return gpuGetLastError();
}

gpuError_t Rope(float* x, int64_t n_tokens, int64_t n_heads, int64_t head_dim, int64_t n_rot, const int32_t* pos,
                const float* inv_freq, bool neox, gpuStream_t s) {
  if (n_tokens < 0 || n_heads <= 0 || n_rot <= 0 || n_rot % 2 != 0 || n_rot > head_dim) return gpuErrorInvalidValue;
  if (n_tokens == 0) return gpuSuccess;
  const dim3 grid(static_cast<unsigned>(n_tokens), static_cast<unsigned>(n_heads));
  PG_LAUNCH(RopeKernel, grid, 64, 0, s, x, n_heads, head_dim, n_rot, pos, inv_freq, neox);
  return gpuGetLastError();
}

}  // namespace pg::gpu
