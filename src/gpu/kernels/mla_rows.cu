// MLA's per-token row work (mla_rows.h). One block per token (per token and
// head for RopeHeads); the serial sums run on thread 0 in element order.
#include "gpu/kernels/mla_rows.h"

namespace pg::gpu {
namespace {

constexpr int kThreads = 64;

PG_GLOBAL void CosSinKernel(const double* inv_freq, double mag, int64_t half, const int32_t* pos, float* cos_out,
                            float* sin_out) {
  const int64_t t = blockIdx.x;
  for (int64_t k = threadIdx.x; k < half; k += blockDim.x) {
    const double ang = static_cast<double>(pos[t]) * inv_freq[k];
    cos_out[t * half + k] = static_cast<float>(cos(ang) * mag);
    sin_out[t * half + k] = static_cast<float>(sin(ang) * mag);
  }
}

// Pairs (2i, 2i+1) of v for i < half, at token t's angles; thread-strided.
PG_DEVICE void RopePairs(float* v, const RopeTable& rt, int64_t t) {
  const int64_t half = rt.rope / 2;
  for (int64_t i = threadIdx.x; i < half; i += blockDim.x) {
    const float c = rt.cos[t * half + i], sn = rt.sin[t * half + i];
    const float a = v[2 * i], b = v[2 * i + 1];
    v[2 * i] = a * c - b * sn;
    v[2 * i + 1] = a * sn + b * c;
  }
}

PG_GLOBAL void LatentRowKernel(float* kv, const float* w, float eps, int64_t C, RopeTable rt, const int32_t* slots,
                               DeviceKvPages pages, int64_t layer) {
  __shared__ float scale;
  const int64_t t = blockIdx.x, R = C + rt.rope;
  float* row = kv + t * R;
  if (threadIdx.x == 0) {
    double ss = 0;
    for (int64_t i = 0; i < C; ++i) ss += static_cast<double>(row[i]) * row[i];
    scale = 1.0f / sqrtf(static_cast<float>(ss / static_cast<double>(C)) + eps);
  }
  __syncthreads();
  const float sc = scale;
  for (int64_t i = threadIdx.x; i < C; i += blockDim.x) row[i] = row[i] * sc * w[i];
  RopePairs(row + C, rt, t);
  __syncthreads();
  const int32_t m = slots[t];
  if (m < 0) return;
  uint16_t* dst = pages.Row(m / pages.page_tokens, layer, 0, m % pages.page_tokens);
  for (int64_t i = threadIdx.x; i < R; i += blockDim.x) pages.Store(dst, i, row[i]);
}

PG_GLOBAL void IndexerKeyKernel(float* ik, const float* w, const float* b, int64_t dim, RopeTable rt,
                                const int32_t* slots, DeviceKvPages pages, int64_t index_slot, float* iw, int64_t heads,
                                float w_scale) {
  __shared__ double stats[2];
  const int64_t t = blockIdx.x;
  float* x = ik + t * dim;
  if (threadIdx.x == 0) {
    double mean = 0, var = 0;
    for (int64_t i = 0; i < dim; ++i) mean += x[i];
    mean /= static_cast<double>(dim);
    for (int64_t i = 0; i < dim; ++i) var += (x[i] - mean) * (x[i] - mean);
    stats[0] = mean;
    stats[1] = 1.0 / sqrt(var / static_cast<double>(dim));
  }
  __syncthreads();
  const double mean = stats[0], inv = stats[1];
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) {
    const float v = static_cast<float>((x[i] - mean) * inv);
    x[i] = v * w[i] + b[i];
  }
  __syncthreads();
  RopePairs(x, rt, t);
  for (int64_t i = threadIdx.x; i < heads; i += blockDim.x) iw[t * heads + i] *= w_scale;
  __syncthreads();
  const int32_t m = slots[t];
  if (m < 0) return;
  uint16_t* dst = pages.IndexRow(m / pages.page_tokens, index_slot, m % pages.page_tokens);
  for (int64_t i = threadIdx.x; i < dim; i += blockDim.x) pages.Store(dst, i, x[i]);
}

PG_GLOBAL void RopeHeadsKernel(float* x, int64_t heads, int64_t stride, int64_t off, RopeTable rt, float* dst,
                               int64_t dst_stride, int64_t dst_off) {
  const int64_t t = blockIdx.x, h = blockIdx.y;
  float* v = x + (t * heads + h) * stride + off;
  RopePairs(v, rt, t);
  if (dst == nullptr) return;
  float* d = dst + (t * heads + h) * dst_stride + dst_off;
  for (int64_t i = threadIdx.x; i < rt.rope / 2; i += blockDim.x) {  // the pairs this thread rotated
    d[2 * i] = v[2 * i];
    d[2 * i + 1] = v[2 * i + 1];
  }
}

bool TableOk(const RopeTable& rt) { return rt.cos && rt.sin && rt.rope > 0 && rt.rope % 2 == 0; }

}  // namespace

gpuError_t MlaCosSin(const double* inv_freq, double mag, int64_t rope, const int32_t* pos, int64_t T, float* cos_out,
                     float* sin_out, gpuStream_t s) {
  if (T < 0 || rope <= 0 || rope % 2 != 0) return gpuErrorInvalidValue;
  if (T == 0) return gpuSuccess;
  PG_LAUNCH(CosSinKernel, dim3(static_cast<unsigned>(T)), kThreads, 0, s, inv_freq, mag, rope / 2, pos, cos_out,
            sin_out);
  return gpuGetLastError();
}

gpuError_t MlaLatentRows(float* kv, const float* norm_w, float eps, int64_t T, int64_t kv_lora, const RopeTable& rt,
                         const int32_t* slots, const DeviceKvPages& pages, int64_t layer, gpuStream_t s) {
  if (T < 0 || kv_lora <= 0 || !TableOk(rt) || pages.kv_dim() != kv_lora + rt.rope || layer < 0)
    return gpuErrorInvalidValue;
  if (T == 0) return gpuSuccess;
  PG_LAUNCH(LatentRowKernel, dim3(static_cast<unsigned>(T)), kThreads, 0, s, kv, norm_w, eps, kv_lora, rt, slots, pages,
            layer);
  return gpuGetLastError();
}

gpuError_t IndexerKeys(float* ik, const float* w, const float* b, int64_t T, int64_t dim, const RopeTable& rt,
                       const int32_t* slots, const DeviceKvPages& pages, int64_t index_slot, float* iw, int64_t heads,
                       float w_scale, gpuStream_t s) {
  if (T < 0 || dim <= 0 || !TableOk(rt) || rt.rope > dim || pages.index_dim != dim || index_slot < 0 || heads <= 0)
    return gpuErrorInvalidValue;
  if (T == 0) return gpuSuccess;
  PG_LAUNCH(IndexerKeyKernel, dim3(static_cast<unsigned>(T)), kThreads, 0, s, ik, w, b, dim, rt, slots, pages,
            index_slot, iw, heads, w_scale);
  return gpuGetLastError();
}

gpuError_t RopeHeads(float* x, int64_t T, int64_t heads, int64_t stride, int64_t off, const RopeTable& rt, float* dst,
                     int64_t dst_stride, int64_t dst_off, gpuStream_t s) {
  if (T < 0 || heads <= 0 || !TableOk(rt) || off < 0 || off + rt.rope > stride) return gpuErrorInvalidValue;
  if (dst && dst_off + rt.rope > dst_stride) return gpuErrorInvalidValue;
  if (T == 0) return gpuSuccess;
  const dim3 grid(static_cast<unsigned>(T), static_cast<unsigned>(heads));
  PG_LAUNCH(RopeHeadsKernel, grid, kThreads, 0, s, x, heads, stride, off, rt, dst, dst_stride, dst_off);
  return gpuGetLastError();
}

}  // namespace pg::gpu
