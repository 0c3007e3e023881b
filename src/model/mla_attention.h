// Multi-head latent attention (MLA) in the absorbed form, for one query
// token and all its heads, over the latent rows of the KV cache: multi-query
// attention where every head reads the same cached row
//
//   row_s = [c_s (kv_lora) | k_pe_s (rope)]      (KvPages::Row(block, layer, 0, slot))
//   q_h   = [W_kb[h] q_nope_h (kv_lora) | RoPE(q_pe_h) (rope)]
//   s_hj  = scale * dot(q_h, row_j);  p_hj = exp(s_hj - max_j s_hj);  o_h = sum_j p_hj c_j / sum_j p_hj
//
// V is the latent itself (the first kv_lora elements of the row). The keys:
//   - a list of positions in increasing order (DeepSeek sparse attention:
//     the indexer's top-k; only those rows are read), or
//   - all positions [0, n_keys), optionally with `allowed` (one byte per
//     position): the dense-masked mode computes every key's score and gives
//     the disallowed ones weight 0.
// Arithmetic, f32: each row is widened once; dots as DotLanes8
// (dsa_indexer.h); max over keys; p and sum_j p in key order; o accumulated
// with fmas in key order, then divided by the sum. A disallowed key adds an
// exact 0 to the sum and to o, so the dense-masked mode gives the same bits
// as the sparse list of its allowed keys (mla_attention_test), and a
// query's result never depends on batch, chunking or threads.
//
// Forms: MlaAttendScalar is the reference (one row at a time, scalar fmas);
// MlaAttendAvx512 (mla_attention_avx512.cc) tiles the same operations across
// heads and keys (one widened row feeds every head's 8 dot lanes, and the
// weighted sum keeps a block of every head's outputs in registers over a tile
// of keys) and gives the reference's bits (MlaAttend.*MatchesTheScalar test).
// MlaAttend runs the best form of the active ISA (PROSGROW_ISA).
//
// Thread-safety: pure function on caller memory.
#pragma once

#include <cstddef>
#include <cstdint>

#include "model/kv_pages.h"

namespace pg {

struct MlaAttentionArgs {
  const KvPages* kv = nullptr;
  const int32_t* block_table = nullptr;
  int64_t layer = 0;
  int64_t kv_lora = 0;
  int64_t rope = 0;
  int64_t n_heads = 0;
  float scale = 1.0f;
};

// q: (n_heads, kv_lora + rope); out: (n_heads, kv_lora). keys: null for all
// of [0, n_keys), else n_keys positions ascending. allowed: null, or (with
// keys null) n_keys bytes, 0 = masked. scratch: MlaAttendScratchFloats.
void MlaAttend(const MlaAttentionArgs& a, const float* q, const int32_t* keys, int64_t n_keys, const uint8_t* allowed,
               float* out, float* scratch);
size_t MlaAttendScratchFloats(const MlaAttentionArgs& a, int64_t max_keys);

// The forms (above); each takes MlaAttend's arguments and scratch.
void MlaAttendScalar(const MlaAttentionArgs& a, const float* q, const int32_t* keys, int64_t n_keys,
                     const uint8_t* allowed, float* out, float* scratch);
void MlaAttendAvx512(const MlaAttentionArgs& a, const float* q, const int32_t* keys, int64_t n_keys,
                     const uint8_t* allowed, float* out, float* scratch);  // host must run AVX-512

// Keys per tile of MlaAttendAvx512 (rows widened together).
inline constexpr int64_t kMlaTileKeys = 16;

// The softmax of MlaAttend over scores p (H, n) in place: max, p = exp(p - max)
// (0 where p is -inf), sums[h] = the key-order sum. Shared by the forms.
void MlaSoftmaxRows(float* p, int64_t H, int64_t n, float* sums);
// Widens the latent row of position pos (its first n elements).
void MlaWidenRow(const MlaAttentionArgs& a, int64_t pos, float* dst, int64_t n);

}  // namespace pg
