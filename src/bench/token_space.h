// TokenSpace: turns abstract workload content (scope, block id, position)
// into concrete token ids that a server accepts, and token ids into words for
// servers that only take text.
//
// Content rule: the token at (scope, block_id, pos) depends only on those
// three values and the seed, so two prompts built from equal
// (scope, block_id) sequences are identical token for token and share their
// prefix exactly, in tokens mode and (word for word) in text mode.
//
// Token ids are drawn uniformly from [lo, hi), chosen from the vocabulary
// size to keep clear of special tokens (see ForVocab).
// Thread-safety: immutable value type.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace pg::bench {

// SplitMix64 finalizer: a bijective 64-bit mix, used for all content hashing.
inline uint64_t Mix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

class TokenSpace {
 public:
  // Ids in [lo, hi) where, for a vocabulary of V ids:
  //   lo = 1000 if V >= 8192, else V / 4   (low ids hold byte/control/special
  //        tokens in llama, gpt2 and sentencepiece vocabularies);
  //   hi = V - V / 16                       (Qwen, Llama-3 and others keep
  //        their added special tokens at the end of the vocabulary).
  // V must be >= 64.
  static Result<TokenSpace> ForVocab(int64_t vocab_size, uint64_t seed);

  TokenSpace(int32_t lo, int32_t hi, uint64_t seed) : lo_(lo), hi_(hi), seed_(seed) {}

  int32_t lo() const { return lo_; }
  int32_t hi() const { return hi_; }
  uint64_t seed() const { return seed_; }

  // The content token at position `pos` of block `block_id` in `scope`.
  int32_t TokenAt(uint64_t scope, uint64_t block_id, uint64_t pos) const;

  // Appends `n` tokens of block (scope, block_id), positions 0..n-1.
  void AppendBlock(uint64_t scope, uint64_t block_id, int64_t n, std::vector<int32_t>* out) const;

  // A fixed word for a token id: " " + letters, distinct for distinct ids.
  // Text-mode prompts are the concatenation of the words of their tokens, so
  // equal token prefixes give equal character prefixes.
  static std::string WordFor(int32_t token);
  static std::string TextFor(const std::vector<int32_t>& tokens);

 private:
  int32_t lo_ = 0;
  int32_t hi_ = 1;
  uint64_t seed_ = 0;
};

}  // namespace pg::bench
