// Paged causal attention for one query vector against a sequence's K/V
// pages, with llama.cpp-compatible numerics for f16 KV.
//
// f16 KV ("online f16" — the arithmetic of llama.cpp's CPU flash attention
// for short query batches, which is how the oracle fixtures were computed):
//   q is rounded to f16; score_j = dot(k_j, q) computed as f32 FMAs in four
//   8-lane accumulators over 32-element steps, reduced in a fixed order (the
//   tail in double); online softmax over keys in order, with the output
//   accumulated in an f16 vector: acc = f16(fma(v_j, w, acc)), rescaled by
//   f16(acc * exp(M_old - M_new)) when a new maximum appears; out = acc / S.
// bf16 KV: plain f32 arithmetic (scores, softmax, weighted sum of V).
//
// The result for a query depends only on the query and the keys before it —
// never on batch composition, chunking or thread count — so a prefix-cache
// hit reproduces exactly what recomputation would give.
//
// Thread-safety: pure function on caller memory.
#pragma once

#include <cstdint>

#include "model/kv_pages.h"

namespace pg {

struct AttentionArgs {
  const KvPages* kv = nullptr;
  const int32_t* block_table = nullptr;
  int64_t layer = 0;
  int64_t kv_head = 0;
  int64_t head_dim = 0;   // <= 512
  int64_t n_keys = 0;     // attend to positions [0, n_keys)
  float scale = 1.0f;     // 1/sqrt(head_dim)
};

// out[head_dim] = attention of q[head_dim]. scratch: n_keys floats (bf16 path).
void AttendOne(const AttentionArgs& a, const float* q, float* out, float* scratch);

// Implementations, exposed for the SIMD-vs-scalar test.
void AttendOneScalar(const AttentionArgs& a, const float* q, float* out, float* scratch);
void AttendOneAvx2(const AttentionArgs& a, const float* q, float* out, float* scratch);

}  // namespace pg
