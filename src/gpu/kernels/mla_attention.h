// Multi-head latent attention (MLA) in the absorbed form on the device
// (MlaAttend, model/mla_attention.h, is the reference): for each token t and
// head h, multi-query attention over the token's cached latent rows
//
//   row_s = [c_s (kv_lora) | k_pe_s (rope)]     (DeviceKvPages::Row(block, layer, 0, slot))
//   s_j   = scale * dot(q[t, h], row_j);  p_j = exp(s_j - max_j s_j);  out[t, h] = sum_j p_j c_j / sum_j p_j
//
// over the keys [0, n_keys[t]), or, where sel is given and n_keys[t] > top_k,
// only the sel_n[t] positions of sel[t] (the indexer's top-k, ascending):
// sparse attention reads only those rows. One block per (token, head): the
// max over keys, then chunks of keys whose weights go to shared memory; each
// thread owns some latent dims and accumulates them with fmas in key order,
// and every thread sums the weights in key order, as MlaAttend does, so the
// emulated kernel gives the CPU's bits. V is the latent part of the row: the
// output is in latent space (W_vb follows on the executor).
// All pointers are device memory. Thread-safety: as the stream.
#pragma once

#include <cstdint>

#include "gpu/kernels/kv_pages.cuh"
#include "gpu/runtime/gpu_vendor.h"

namespace pg::gpu {

inline constexpr int64_t kMlaMaxLatent = 1024;  // kv_lora
inline constexpr int64_t kMlaMaxRow = 1152;     // kv_lora + rope

struct MlaBatch {
  const float* q = nullptr;  // (T, heads, kv_lora + rope) absorbed queries
  float* out = nullptr;      // (T, heads, kv_lora)
  int64_t n_rows = 0;        // T
  int64_t heads = 0;
  int64_t kv_lora = 0;
  int64_t rope = 0;
  float scale = 1.0f;
  const int32_t* block_tables = nullptr;  // concatenated tables
  const int32_t* table_offset = nullptr;  // (T)
  const int32_t* n_keys = nullptr;        // (T) causal keys of row t
  const int32_t* sel = nullptr;           // (T, top_k) or null: dense
  const int32_t* sel_n = nullptr;         // (T)
  int64_t top_k = 0;
};

gpuError_t MlaAttention(const MlaBatch& b, const DeviceKvPages& kv, int64_t layer, gpuStream_t s);

}  // namespace pg::gpu
