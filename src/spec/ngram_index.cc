#include "spec/ngram_index.h"

#include <algorithm>

namespace pg {

NgramIndex::NgramIndex(int n_min, int n_max) : n_min_(std::max(1, n_min)), n_max_(std::max(n_min_, n_max)) {}

uint64_t NgramIndex::Hash(const int32_t* tokens, int n) {
  uint64_t h = 0x9e3779b97f4a7c15ull ^ static_cast<uint64_t>(n);
  for (int i = 0; i < n; ++i) {
    h ^= static_cast<uint32_t>(tokens[i]);
    h *= 0xff51afd7ed558ccdull;
    h ^= h >> 33;
  }
  return h;
}

void NgramIndex::Extend(std::span<const int32_t> context) {
  const int64_t len = static_cast<int64_t>(context.size());
  if (len < indexed_) {
    last_pos_.clear();
    indexed_ = 0;
  }
  // Position p (a continuation start) is indexed once the token at p exists:
  // p < len. The n-gram ending at len has no continuation yet.
  for (int64_t p = indexed_; p < len; ++p) {
    for (int n = n_min_; n <= n_max_ && n <= p; ++n) last_pos_[Hash(context.data() + p - n, n)] = p;
  }
  indexed_ = std::max(indexed_, len);
}

int NgramIndex::Propose(std::span<const int32_t> context, int max, std::vector<int32_t>* out) const {
  const int64_t len = static_cast<int64_t>(context.size());
  if (max <= 0) return 0;
  for (int n = std::min<int64_t>(n_max_, len - 1); n >= n_min_; --n) {
    const int32_t* suffix = context.data() + len - n;
    auto it = last_pos_.find(Hash(suffix, n));
    if (it == last_pos_.end()) continue;
    const int64_t p = it->second;
    if (p < n || p >= len || !std::equal(suffix, suffix + n, context.data() + p - n)) continue;
    const int64_t take = std::min<int64_t>(max, len - p);
    out->insert(out->end(), context.begin() + p, context.begin() + p + take);
    return static_cast<int>(take);
  }
  return 0;
}

}  // namespace pg
