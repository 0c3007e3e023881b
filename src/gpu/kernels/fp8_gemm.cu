// The FP8 prefill GEMM (fp8_matmul.h): activation quantization, our tiled
// kernel, and the cuBLASLt call of the CUDA build.
#include <cstring>

#include "gpu/kernels/fp8_matmul.h"
#include "gpu/kernels/gemm_tile.cuh"
#include "gpu/kernels/reduce.cuh"

namespace pg::gpu {
namespace {

constexpr int kThreads = 128;
constexpr int64_t kGroup = 128;  // the activations' block along k for block-scaled weights
constexpr size_t kAlign = 256;

size_t Rounded(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

// One block per (padded token blockIdx.x, group blockIdx.y).
PG_GLOBAL void QuantizeKernel(const float* x, int64_t n, int64_t k, int64_t group, uint8_t* x8, float* xs) {
  __shared__ float scratch[kMaxWarps];
  const int64_t t = blockIdx.x, g = blockIdx.y, n_pad = gridDim.x;
  const int64_t c0 = g * group, c1 = c0 + group < k ? c0 + group : k;
  if (t >= n) {  // padding token: zero bytes, zero scale
    for (int64_t c = c0 + threadIdx.x; c < c1; c += blockDim.x) x8[t * k + c] = 0;
    if (threadIdx.x == 0) xs[g * n_pad + t] = 0.0f;
    return;
  }
  float amax = 0.0f;
  for (int64_t c = c0 + threadIdx.x; c < c1; c += blockDim.x) amax = fmaxf(amax, fabsf(x[t * k + c]));
  amax = BlockMax(amax, scratch);
  const float scale = amax / 448.0f;
  for (int64_t c = c0 + threadIdx.x; c < c1; c += blockDim.x)
    x8[t * k + c] = scale > 0.0f ? FloatToE4m3(x[t * k + c] / scale) : 0;
  if (threadIdx.x == 0) xs[g * n_pad + t] = scale;
}

// GemmBf16Kernel's tiling (gemm_tile.cuh) over FP8 operands, each decoded
// in-register to scale * value on its way into shared memory.
PG_GLOBAL void Fp8GemmKernel(const uint8_t* w, const float* w_scales, Fp8Layout layout, int64_t ld, const uint8_t* x8,
                             const float* xs, int64_t n_pad, int64_t group, float* y, int64_t m, int64_t n, int64_t k) {
  __shared__ float wt[kTile][kDepth + 1];
  __shared__ float xt[kTile][kDepth + 1];
  auto w_at = [&](int64_t r, int64_t c) { return Fp8ScaleAt(w_scales, layout, ld, r, c) * E4m3ToFloat(w[r * k + c]); };
  auto x_at = [&](int64_t t, int64_t c) { return xs[(c / group) * n_pad + t] * E4m3ToFloat(x8[t * k + c]); };
  GemmTiles(w_at, x_at, wt, xt, y, m, n, k);
}

thread_local bool last_used_blaslt = false;

}  // namespace

int64_t Fp8ActivationGroup(const DeviceMatrix& w) { return w.scale_layout == Fp8Layout::kPerRow ? w.cols : kGroup; }

gpuError_t QuantizeActivationsFp8(const float* x, int64_t n, int64_t k, int64_t group, uint8_t* x8, float* xs,
                                  gpuStream_t s) {
  if (n < 0 || k <= 0 || group <= 0) return gpuErrorInvalidValue;
  if (n == 0) return gpuSuccess;
  const dim3 grid(static_cast<unsigned>(Fp8PaddedTokens(n)), static_cast<unsigned>((k + group - 1) / group));
  PG_LAUNCH(QuantizeKernel, grid, kThreads, 0, s, x, n, k, group, x8, xs);
  return gpuGetLastError();
}

size_t Fp8GemmScratchBytes(int64_t n, int64_t k, int64_t m) {
  const auto n_pad = static_cast<size_t>(Fp8PaddedTokens(n));
  const auto groups = static_cast<size_t>((k + kGroup - 1) / kGroup);
  return Rounded(n_pad * static_cast<size_t>(k)) + Rounded(4 * n_pad * groups) +
         Rounded(4 * n_pad * static_cast<size_t>(m));
}

gpuError_t GemmFp8(const DeviceMatrix& w, const float* x, int64_t n, float* y, void* scratch, size_t scratch_bytes,
                   gpuStream_t s) {
  last_used_blaslt = false;
  if (!Fp8ShapeOk(w) || n < 0) return gpuErrorInvalidValue;
  if (n == 0) return gpuSuccess;
  const int64_t m = w.rows, k = w.cols, n_pad = Fp8PaddedTokens(n), group = Fp8ActivationGroup(w);
  if (scratch == nullptr || scratch_bytes < Fp8GemmScratchBytes(n, k, m)) return gpuErrorInvalidValue;
  auto* x8 = static_cast<uint8_t*>(scratch);
  auto* xs = reinterpret_cast<float*>(x8 + Rounded(static_cast<size_t>(n_pad * k)));
  if (gpuError_t e = QuantizeActivationsFp8(x, n, k, group, x8, xs, s); e != gpuSuccess) return e;
#if PG_HAVE_BLASLT
  // cuBLASLt writes n_pad columns of D: straight into y when n is a multiple of 4.
  float* d = n_pad == n ? y
                        : reinterpret_cast<float*>(reinterpret_cast<uint8_t*>(xs) +
                                                   Rounded(4 * static_cast<size_t>(n_pad * ((k + 127) / 128))));
  bool ran = false;
  if (gpuError_t e = BlasLtGemmFp8(w, x8, xs, n_pad, d, s, &ran); e != gpuSuccess) return e;
  if (ran) {
    last_used_blaslt = true;
    if (d == y) return gpuSuccess;
    return gpuMemcpyAsync(y, d, static_cast<size_t>(n * m) * sizeof(float), gpuMemcpyDeviceToDevice, s);
  }
#endif
  const dim3 grid(static_cast<unsigned>((m + kTile - 1) / kTile), static_cast<unsigned>((n + kTile - 1) / kTile));
  PG_LAUNCH(Fp8GemmKernel, grid, kTileThreads, 0, s, static_cast<const uint8_t*>(w.data), w.scales, w.scale_layout,
            w.scale_ld, x8, xs, n_pad, group, y, m, n, k);
  return gpuGetLastError();
}

bool LastFp8GemmUsedBlasLt() { return last_used_blaslt; }

}  // namespace pg::gpu
