// The lightning indexer's scores (indexer.h). One block per token, one thread per key.
#include "gpu/kernels/indexer.h"
#include "gpu/kernels/mla_dot.cuh"

namespace pg::gpu {
namespace {

constexpr int kThreads = 128;

PG_GLOBAL void IndexerKernel(IndexerBatch b, DeviceKvPages kv) {
  const int64_t t = blockIdx.x, n = b.n_keys[t];
  if (n <= b.top_k) return;
  const int32_t* table = b.block_tables + b.table_offset[t];
  const float* iq = b.iq + t * b.heads * b.dim;
  const float* w = b.w + t * b.heads;
  for (int64_t s = threadIdx.x; s < n; s += blockDim.x) {
    const uint16_t* key = kv.IndexRow(table[s / kv.page_tokens], b.index_slot, s % kv.page_tokens);
    float sum = 0;
    for (int64_t h = 0; h < b.heads; ++h) {
      const float d = DotLanes8Row(iq + h * b.dim, kv, key, b.dim);
      sum += w[h] * (d < 0.0f ? 0.0f : d);  // std::max(d, 0.0f), NaN kept
    }
    b.scores[t * b.ld + s] = sum;
  }
}

}  // namespace

gpuError_t IndexerScoresBatch(const IndexerBatch& b, const DeviceKvPages& kv, gpuStream_t s) {
  if (b.n_rows < 0 || b.heads <= 0 || b.dim <= 0 || b.top_k <= 0 || b.index_slot < 0 || kv.index_dim != b.dim ||
      kv.page_tokens <= 0)
    return gpuErrorInvalidValue;
  if (b.n_rows == 0) return gpuSuccess;
  PG_LAUNCH(IndexerKernel, dim3(static_cast<unsigned>(b.n_rows)), kThreads, 0, s, b, kv);
  return gpuGetLastError();
}

}  // namespace pg::gpu
