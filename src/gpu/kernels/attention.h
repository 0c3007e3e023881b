// Paged attention on the device over prosgrow's block layout (kv_pages.cuh),
// for prefill and decode rows in one launch: query row i attends to keys
// [0, n_keys[i]) of its sequence, whose block table starts at
// block_tables + table_offset[i] (so several sequences, each with its own
// table, share a launch; causal prefill rows of one sequence differ only in
// n_keys).
//
// Arithmetic: f32 online softmax over tiles of kAttnTileKeys keys, scores
// s_j = scale * dot(q, k_j) in f32 (q rounded to f16 first when round_q, as
// the CPU's kTiledF32 does by default), per tile M_new = max(M, max_j s_j),
// a = exp(M - M_new), p_j = exp(s_j - M_new), S = S * a + sum_j p_j,
// acc = acc * a + sum_j p_j v_j; out = acc / S (0 when n_keys = 0).
// Grouped-query heads: one thread block per (row, kv head) runs the
// n_heads / n_kv_heads query heads sharing that kv head, so each K/V row is
// read once per group. CPU reference: AttendGroupScalar (model/attention.h).
#pragma once

#include <cstdint>

#include "gpu/kernels/kv_pages.cuh"
#include "gpu/runtime/gpu_vendor.h"

namespace pg::gpu {

inline constexpr int kAttnTileKeys = 32;

struct AttentionBatch {
  const float* q = nullptr;  // (n_rows, n_heads, head_dim)
  float* out = nullptr;      // (n_rows, n_heads, head_dim)
  int64_t n_rows = 0;
  int64_t n_heads = 0;                    // a multiple of kv.n_kv_heads
  const int32_t* block_tables = nullptr;  // all rows' tables, concatenated
  const int32_t* table_offset = nullptr;  // (n_rows) first entry of row i's table
  const int32_t* n_keys = nullptr;        // (n_rows)
  float scale = 1.0f;
  bool round_q = true;
};

gpuError_t PagedAttention(const AttentionBatch& b, const DeviceKvPages& kv, int64_t layer, gpuStream_t s);

}  // namespace pg::gpu
