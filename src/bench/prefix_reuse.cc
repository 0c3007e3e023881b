#include "bench/prefix_reuse.h"

#include "bench/token_space.h"

namespace pg::bench {

int64_t PrefixReuseTracker::Observe(const std::vector<int32_t>& prompt) {
  const int64_t n = static_cast<int64_t>(prompt.size());
  const int64_t full_blocks = n / block_;
  const int64_t max_reusable = n > 0 ? (n - 1) / block_ : 0;
  std::vector<uint64_t> chain(static_cast<size_t>(full_blocks));
  uint64_t h = 0x51ed270b27e4c3a1ULL;
  for (int64_t j = 0; j < full_blocks; ++j) {
    uint64_t bh = 0x9ae16a3b2f90404fULL;
    for (int64_t t = j * block_; t < (j + 1) * block_; ++t) bh = Mix64(bh ^ static_cast<uint32_t>(prompt[t]));
    h = Mix64(h ^ bh);
    chain[static_cast<size_t>(j)] = h;
  }
  std::lock_guard<std::mutex> lock(mu_);
  int64_t hit = 0;
  while (hit < max_reusable && seen_.count(chain[static_cast<size_t>(hit)])) ++hit;
  for (uint64_t c : chain) seen_.insert(c);
  return hit * block_;
}

}  // namespace pg::bench
