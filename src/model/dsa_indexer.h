// The DeepSeek sparse attention (DSA) lightning indexer's scores for one
// query over its causal keys, read from the indexer key cache:
//
//   score(s) = sum_h w[h] * relu(dot(iq_h, ik_s))      s in [0, n_keys)
//
// iq: (heads, dim) the query's roped indexer heads; w: (heads) its head
// weights (already divided by sqrt(dim * heads)); ik_s: key s, f16 or bf16
// in the cache (KvPages::IndexRow). Each key row is widened to f32 once; each
// dot sums 8 lanes (lane l takes d = l mod 8, in increasing d, with fmas)
// reduced as ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)), a tail fma'd on after;
// the heads are summed in order. Eight keys go at once where the host has
// AVX2 and FMA, each with exactly these operations. A key's score depends only on the query
// and that key, never on the batch, chunking or threads. Top-k selection of
// the result is topk_select.h.
//
// Thread-safety: pure function on caller memory.
#pragma once

#include <cstdint>

#include "model/kv_pages.h"

namespace pg {

struct IndexerArgs {
  const KvPages* kv = nullptr;
  const int32_t* block_table = nullptr;
  int64_t index_slot = 0;  // the layer's slot among the indexer layers (MlaConfig::IndexSlot)
  int64_t heads = 0;
  int64_t dim = 0;  // <= 4096
};

// Keys scored together (the same bits as one at a time).
inline constexpr int kIndexerKeyGroup = 8;

// scores: (n_keys). key: (kIndexerKeyGroup * dim) f32 scratch.
void IndexerScores(const IndexerArgs& a, const float* iq, const float* w, int64_t n_keys, float* scores, float* key);

// Keys [k0, k1) only, into scores[k0, k1): each key's bits are those IndexerScores gives it, so
// threads may split a query's keys among them.
void IndexerScoresRange(const IndexerArgs& a, const float* iq, const float* w, int64_t k0, int64_t k1, float* scores,
                        float* key);

// The 8-lane f32 dot used by the indexer and MLA attention (order above).
float DotLanes8(const float* a, const float* b, int64_t n);
float DotLanes8Scalar(const float* a, const float* b, int64_t n);  // the reference (any host)

// One key's score (f32 key row) in the order above, one key at a time: the reference.
float KeyScoreScalar(const float* iq, const float* w, int64_t heads, int64_t dim, const float* key);

// o[d] = fma(w, row[d], o[d]) for d < n: MLA attention's weighted sum of latent rows.
void FmaRow(float w, const float* row, float* o, int64_t n);
void FmaRowScalar(float w, const float* row, float* o, int64_t n);  // the reference (any host)

// Widens one cached row (f16, bf16, or f32: copied) to f32.
void WidenRow(const uint16_t* src, KvDtype dtype, float* dst, int64_t n);

}  // namespace pg
