// TestKvArena: a private KV arena with an identity block table, for tests
// and tools that run one sequence without the tiered cache.
#pragma once

#include <cstdlib>
#include <memory>
#include <numeric>
#include <vector>

#include "model/kv_pages.h"
#include "model/model_config.h"

namespace pg {

class TestKvArena {
 public:
  TestKvArena(const ModelConfig& c, int64_t page_tokens, int64_t max_tokens, KvDtype dtype = KvDtype::kF16) {
    n_blocks_ = (max_tokens + page_tokens - 1) / page_tokens;
    pages_.layout = c.KvLayoutFor(page_tokens, dtype);
    pages_.block_bytes = pages_.layout.block_bytes();
    mem_.resize(pages_.block_bytes * static_cast<size_t>(n_blocks_));
    pages_.base = mem_.data();
    table_.resize(static_cast<size_t>(n_blocks_));
    std::iota(table_.begin(), table_.end(), 0);
  }
  const KvPages& pages() const { return pages_; }
  const int32_t* table() const { return table_.data(); }
  int64_t n_blocks() const { return n_blocks_; }
  // The whole arena (every block's bytes), for byte-level comparisons.
  std::vector<uint8_t>& bytes() { return mem_; }

 private:
  KvPages pages_;
  int64_t n_blocks_ = 0;
  std::vector<uint8_t> mem_;
  std::vector<int32_t> table_;
};

}  // namespace pg
