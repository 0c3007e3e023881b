// NgramIndex: prompt-lookup drafting over one sequence's own context.
//
// The index maps the hash of every n-gram (n_min <= n <= n_max) of the
// context to the position right after its most recent occurrence that has a
// continuation. Extend() indexes only the positions added since the last
// call, so each step costs O(new tokens x n-gram sizes), not a scan of the
// context. Propose() hashes the context's last n tokens (longest n first),
// verifies the hit token by token (hashes can collide), and copies the tokens
// that followed that occurrence.
//
//   context: ... a b c [d e f] ... x a b c      last 3 tokens "a b c"
//                       ^ continuation starts here (the earlier "a b c")
//   draft:   d e f (up to max tokens)
//
// Thread-safety: per-sequence state; one thread at a time.
#pragma once

#include <cstdint>
#include <span>
#include <unordered_map>
#include <vector>

namespace pg {

class NgramIndex {
 public:
  NgramIndex(int n_min = 1, int n_max = 4);

  // Indexes context positions not seen yet. The context must extend the one
  // of the previous call (the engine only appends); a shorter one resets.
  void Extend(std::span<const int32_t> context);
  // Appends up to max tokens that followed the latest earlier occurrence of
  // the longest matching suffix; returns how many (0 = no match).
  int Propose(std::span<const int32_t> context, int max, std::vector<int32_t>* out) const;

  size_t size() const { return last_pos_.size(); }  // distinct n-grams indexed

 private:
  static uint64_t Hash(const int32_t* tokens, int n);

  int n_min_, n_max_;
  int64_t indexed_ = 0;                             // continuation positions [0, indexed_) are indexed
  std::unordered_map<uint64_t, int64_t> last_pos_;  // hash(n-gram) -> position after it
};

}  // namespace pg
