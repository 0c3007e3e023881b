// PrefixReuseTracker: the workload's ideal prefix reuse with an unlimited,
// block-granular prefix cache.
//
// Definition, for block size B and the prompts p_1, p_2, ... in the order
// they are sent:
//   ideal(p_i) = B * max { j : j * B <= |p_i| - 1 and some earlier p_k
//                              (k < i) has |p_k| >= j * B and
//                              p_k[0, jB) == p_i[0, jB) }
// i.e. the longest prefix, in whole blocks, that an earlier prompt already
// contained, leaving at least the last prompt token to compute (as paged
// prefix caches do). The ideal reuse of a run is sum ideal / sum |p|.
// Generated tokens are not counted as cacheable: the workloads append
// synthetic replies, not the server's text.
// Implementation: a set of chained block hashes h_j = Mix64(h_{j-1} ^ H(block j)).
// Thread-safety: Observe is serialized by an internal mutex.
#pragma once

#include <cstdint>
#include <mutex>
#include <unordered_set>
#include <vector>

namespace pg::bench {

class PrefixReuseTracker {
 public:
  explicit PrefixReuseTracker(int64_t block_tokens) : block_(block_tokens) {}
  // Returns ideal(prompt) as defined above, then records `prompt`.
  int64_t Observe(const std::vector<int32_t>& prompt);
  int64_t block_tokens() const { return block_; }

 private:
  int64_t block_;
  std::mutex mu_;
  std::unordered_set<uint64_t> seen_;  // chained hashes of every full-block prefix seen
};

}  // namespace pg::bench
