// Paged causal attention for query vectors against a sequence's K/V pages.
// Two arithmetics for f16 KV, chosen by AttentionMode (`--attn llama|fast`;
// `--attn precise` runs kTiledF32 here and differs in the matrix products,
// model.h):
//
// kLlamaF16 ("llama": AttendOne) — llama.cpp's CPU flash attention for short
// query batches, which is how the oracle fixtures were computed:
//   q is rounded to f16; score_j = dot(k_j, q) computed as f32 FMAs in four
//   8-lane accumulators over 32-element steps, reduced in a fixed order (the
//   tail in double); online softmax over keys in order, with the output
//   accumulated in an f16 vector: acc = f16(fma(v_j, w, acc)), rescaled by
//   f16(acc * exp(M_old - M_new)) when a new maximum appears; out = acc / S.
//   One key at a time with a scalar std::exp: latency-bound at long context.
//
// kTiledF32 ("fast": AttendGroup) — f32 online softmax over tiles of
// kAttentionTileKeys keys, tile t = keys [32t, 32t + 32), fixed by absolute
// key position:
//   q is rounded to f16 (as llama.cpp does; measured closer to the oracle
//   than an f32 q) and used as f32; s_j = scale * dot(q, f32(k_j)), the dot as
//   8 lanes (lane l sums d = l mod 8 in increasing d with fmas), reduced as
//   ((l0+l1)+(l2+l3)) + ((l4+l5)+(l6+l7)), a head_dim tail (not a multiple
//   of 8) fma'd on after; per tile: m = max_j s_j, M_new = max(M, m),
//   a = ExpF32(M - M_new), p_j = ExpF32(s_j - M_new) (attention_exp.h),
//   S = fma(S, a, sum_j p_j) with the tile sum taken in 8 lanes (j mod 8) and
//   reduced like the dot; acc = acc * a (skipped when a == 1), then
//   acc = fma(p_j, f32(v_j), acc) for the tile's keys in order; out = acc / S.
//   acc, S and M are f32. The AVX2 form converts each K/V tile to f32 once
//   and uses it for every query of the group (the heads sharing a kv head,
//   and several rows of one sequence), so K/V loads and conversions are
//   amortized while each query's arithmetic stays that of the scalar
//   reference for that query alone.
//
// bf16 KV: plain f32 arithmetic (scores, softmax, weighted sum of V) in
// either mode.
//
// In every mode the result for a query depends only on the query and the
// keys before it — never on batch composition, chunking, grouping or thread
// count — so a prefix-cache hit reproduces exactly what recomputation gives.
// The AVX2 forms are bit-identical to the scalar references.
//
// Thread-safety: pure functions on caller memory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "model/kv_pages.h"

namespace pg {

enum class AttentionMode {
  kLlamaF16,  // "llama": llama.cpp's f16 online softmax, one key at a time
  kTiledF32,  // "fast": f32 tiled online softmax, K/V shared across a GQA group
  // "precise": kTiledF32's attention, and every matrix product on f32
  // activations (backend/cpu/matmul_precise.h) instead of Q8_0/Q8_K/f16
  // rounded ones. A whole arithmetic mode of the model (ModelOptionsFor);
  // the attention kernels themselves only see kLlamaF16 / kTiledF32.
  kPrecise,
};

inline constexpr int64_t kAttentionTileKeys = 32;

struct AttentionArgs {
  const KvPages* kv = nullptr;
  const int32_t* block_table = nullptr;
  int64_t layer = 0;
  int64_t kv_head = 0;
  int64_t head_dim = 0;  // <= 512
  int64_t n_keys = 0;    // attend to positions [0, n_keys)
  float scale = 1.0f;    // 1/sqrt(head_dim)
  // kTiledF32 only: round q to f16 first (llama.cpp does; the default). Off
  // (`--attn precise`): q stays f32, ~1.5x closer to exact arithmetic.
  bool round_q = true;
};

// out[head_dim] = attention of q[head_dim]. scratch: n_keys floats (bf16 path).
void AttendOne(const AttentionArgs& a, const float* q, float* out, float* scratch);

// Implementations, exposed for the SIMD-vs-scalar test.
void AttendOneScalar(const AttentionArgs& a, const float* q, float* out, float* scratch);
void AttendOneAvx2(const AttentionArgs& a, const float* q, float* out, float* scratch);

// One query of a group: q[head_dim] attends to keys [0, n_keys); the result
// goes to out[head_dim].
struct AttentionQuery {
  const float* q = nullptr;
  float* out = nullptr;
  int64_t n_keys = 0;
};

// kTiledF32 for queries that share a.kv, a.block_table, a.layer and
// a.kv_head (a.n_keys is ignored: each query has its own). scratch: at least
// AttendGroupScratchFloats(head_dim, queries.size(), max n_keys) floats.
// bf16 KV falls back to AttendOne for each query.
void AttendGroup(const AttentionArgs& a, std::span<const AttentionQuery> queries, float* scratch);
size_t AttendGroupScratchFloats(int64_t head_dim, int64_t n_queries, int64_t max_keys);

// Implementations, exposed for the SIMD-vs-scalar test. The scalar form
// computes one query at a time; the AVX2 form needs head_dim % 8 == 0, f16 KV.
void AttendGroupScalar(const AttentionArgs& a, std::span<const AttentionQuery> queries, float* scratch);
void AttendGroupAvx2(const AttentionArgs& a, std::span<const AttentionQuery> queries, float* scratch);
// AVX-512 form: same contract as the AVX2 form (head_dim % 8 == 0, f16 KV);
// up to four queries share each K/V load.
void AttendGroupAvx512(const AttentionArgs& a, std::span<const AttentionQuery> queries, float* scratch);

}  // namespace pg
