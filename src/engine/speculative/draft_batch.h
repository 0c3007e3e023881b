// The batch a model drafter (the draft model, the MTP block) runs in one
// forward, and the order its requests catch up in. Step buffers, reused
// across proposals; engine thread only, as the drafter.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <numeric>
#include <vector>

#include "kv/kv_cache_manager.h"
#include "model/model.h"

namespace pg {

// One entry per sequence that runs: seqs[e] (its new tokens, pointing into
// the request's context or draft, and its block table) and rows[e], the index
// of the request it drafts for, or kNoRow for catch-up only (no logits).
struct DraftBatch {
  static constexpr size_t kNoRow = ~size_t{0};

  std::vector<BatchSeq> seqs;
  std::vector<size_t> rows;

  bool empty() const { return seqs.empty(); }
  void clear() {
    seqs.clear();
    rows.clear();
  }
  void swap(DraftBatch& other) {
    seqs.swap(other.seqs);
    rows.swap(other.rows);
  }
  // n tokens at positions [pos, pos + n) of a sequence whose blocks are
  // `table`; logits of the last one when row is a request's.
  void Add(const int32_t* tokens, int64_t n, int64_t pos, const std::vector<BlockId>& table, size_t row) {
    seqs.push_back(BatchSeq{tokens, n, pos, table.data(), static_cast<int64_t>(table.size()), row != kNoRow});
    rows.push_back(row);
  }
};

// *order = the indices of n requests, least behind first (behind(i): the
// tokens request i's sequence lacks; ties keep request order), so sequences
// nearly in step draft before one long prompt's catch-up takes the budget.
template <class Behind>
void CatchUpOrder(size_t n, Behind behind, std::vector<size_t>* order) {
  order->resize(n);
  std::iota(order->begin(), order->end(), size_t{0});
  std::stable_sort(order->begin(), order->end(), [&](size_t a, size_t b) { return behind(a) < behind(b); });
}

}  // namespace pg
