// MLA absorbed attention (mla_attention.h).
#include "gpu/kernels/mla_attention.h"
#include "gpu/kernels/mla_dot.cuh"
#include "gpu/kernels/reduce.cuh"

namespace pg::gpu {
namespace {

constexpr int kThreads = 128;

struct Keys {
  const int32_t* list = nullptr;  // null: positions [0, n)
  int64_t n = 0;
  PG_DEVICE int64_t At(int64_t j) const { return list ? list[j] : j; }
};

PG_GLOBAL void MlaAttendKernel(MlaBatch b, DeviceKvPages kv, int64_t layer) {
  __shared__ float q[kMlaMaxRow];
  __shared__ float o[kMlaMaxLatent];
  __shared__ float p[kThreads];
  __shared__ int32_t pos[kThreads];
  __shared__ float red[kMaxWarps];
  const int64_t t = blockIdx.x, h = blockIdx.y, C = b.kv_lora, R = C + b.rope, P = kv.page_tokens;
  const int tid = static_cast<int>(threadIdx.x);
  const int32_t* table = b.block_tables + b.table_offset[t];
  Keys keys{nullptr, b.n_keys[t]};
  if (b.sel && keys.n > b.top_k) keys = Keys{b.sel + t * b.top_k, b.sel_n[t]};
  for (int64_t d = tid; d < R; d += blockDim.x) q[d] = b.q[(t * b.heads + h) * R + d];
  for (int64_t d = tid; d < C; d += blockDim.x) o[d] = 0.0f;
  __syncthreads();
  auto row_of = [&](int64_t position) { return kv.Row(table[position / P], layer, 0, position % P); };
  float mx = -INFINITY;
  for (int64_t j = tid; j < keys.n; j += blockDim.x)
    mx = fmaxf(mx, b.scale * DotLanes8Row(q, kv, row_of(keys.At(j)), R));
  mx = BlockMax(mx, red);
  float sum = 0.0f;
  for (int64_t base = 0; base < keys.n; base += blockDim.x) {
    const int64_t j = base + tid;
    if (j < keys.n) {
      const int64_t at = keys.At(j);
      p[tid] = expf(b.scale * DotLanes8Row(q, kv, row_of(at), R) - mx);
      pos[tid] = static_cast<int32_t>(at);
    }
    __syncthreads();
    const int64_t nb = blockDim.x, cnt = keys.n - base < nb ? keys.n - base : nb;
    for (int64_t jj = 0; jj < cnt; ++jj) sum += p[jj];
    for (int64_t d = tid; d < C; d += blockDim.x) {
      float acc = o[d];
      for (int64_t jj = 0; jj < cnt; ++jj) acc = fmaf(p[jj], kv.Load(row_of(pos[jj]), d), acc);
      o[d] = acc;
    }
    __syncthreads();
  }
  const float inv = 1.0f / sum;
  for (int64_t d = tid; d < C; d += blockDim.x) b.out[(t * b.heads + h) * C + d] = o[d] * inv;
}

}  // namespace

gpuError_t MlaAttention(const MlaBatch& b, const DeviceKvPages& kv, int64_t layer, gpuStream_t s) {
  if (b.n_rows < 0 || b.heads <= 0 || b.kv_lora <= 0 || b.kv_lora > kMlaMaxLatent || b.rope < 0 ||
      b.kv_lora + b.rope > kMlaMaxRow || kv.kv_dim() != b.kv_lora + b.rope || layer < 0 || (b.sel && b.top_k <= 0))
    return gpuErrorInvalidValue;
  if (b.n_rows == 0) return gpuSuccess;
  const dim3 grid(static_cast<unsigned>(b.n_rows), static_cast<unsigned>(b.heads));
  PG_LAUNCH(MlaAttendKernel, grid, kThreads, 0, s, b, kv, layer);
  return gpuGetLastError();
}

}  // namespace pg::gpu
