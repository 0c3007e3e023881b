// The DeepSeek sparse attention (DSA) lightning indexer's scores on the
// device (IndexerScores, model/dsa_indexer.h, is the reference): for each
// token t whose causal key count n_keys[t] exceeds top_k,
//
//   scores[t * ld + s] = sum_h w[t, h] * max(dot(iq[t, h], ik_s), 0)    s < n_keys[t]
//
// ik_s read from the indexer key cache (DeviceKvPages::IndexRow of indexer
// layer index_slot) through the token's block table. One thread per key: the
// dot in DotLanes8's order (mla_dot.cuh), the heads summed in order, so the
// emulated kernel gives the CPU's bits. Tokens with n_keys <= top_k attend
// to every key and get no scores.
// All pointers are device memory. Thread-safety: as the stream.
#pragma once

#include <cstdint>

#include "gpu/kernels/kv_pages.cuh"
#include "gpu/runtime/gpu_vendor.h"

namespace pg::gpu {

struct IndexerBatch {
  const float* iq = nullptr;  // (T, heads * dim) roped indexer queries
  const float* w = nullptr;   // (T, heads) head weights (already scaled)
  int64_t n_rows = 0;         // T
  int64_t heads = 0;
  int64_t dim = 0;
  int64_t top_k = 0;
  int64_t index_slot = 0;                 // the layer's slot among the indexer layers
  const int32_t* block_tables = nullptr;  // concatenated tables
  const int32_t* table_offset = nullptr;  // (T) row t's table at block_tables + table_offset[t]
  const int32_t* n_keys = nullptr;        // (T) causal keys of row t
  float* scores = nullptr;                // (T, ld)
  int64_t ld = 0;                         // >= max n_keys
};

gpuError_t IndexerScoresBatch(const IndexerBatch& b, const DeviceKvPages& kv, gpuStream_t s);

}  // namespace pg::gpu
