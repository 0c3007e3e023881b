#include "bench/token_space.h"

#include <fmt/format.h>

namespace pg::bench {

Result<TokenSpace> TokenSpace::ForVocab(int64_t vocab_size, uint64_t seed) {
  if (vocab_size < 64 || vocab_size > (int64_t{1} << 30)) {
    return InvalidArgument(fmt::format("vocab size {} out of range [64, 2^30]", vocab_size));
  }
  int64_t lo = vocab_size >= 8192 ? 1000 : vocab_size / 4;
  int64_t hi = vocab_size - vocab_size / 16;
  return TokenSpace(static_cast<int32_t>(lo), static_cast<int32_t>(hi), seed);
}

int32_t TokenSpace::TokenAt(uint64_t scope, uint64_t block_id, uint64_t pos) const {
  uint64_t h = Mix64(seed_);
  h = Mix64(h ^ scope);
  h = Mix64(h ^ block_id);
  h = Mix64(h ^ pos);
  return lo_ + static_cast<int32_t>(h % static_cast<uint64_t>(hi_ - lo_));
}

void TokenSpace::AppendBlock(uint64_t scope, uint64_t block_id, int64_t n, std::vector<int32_t>* out) const {
  for (int64_t p = 0; p < n; ++p) out->push_back(TokenAt(scope, block_id, static_cast<uint64_t>(p)));
}

std::string TokenSpace::WordFor(int32_t token) {
  // Base-21 consonant / base-5 vowel syllables: "ba", "ce", ... one syllable
  // per 105 values, so ids map one-to-one onto pronounceable lowercase words.
  static const char kCons[] = "bcdfghjklmnpqrstvwxyz";
  static const char kVow[] = "aeiou";
  std::string w = " ";
  uint32_t v = static_cast<uint32_t>(token);
  do {
    uint32_t syl = v % 105;
    w.push_back(kCons[syl / 5]);
    w.push_back(kVow[syl % 5]);
    v /= 105;
  } while (v > 0);
  return w;
}

std::string TokenSpace::TextFor(const std::vector<int32_t>& tokens) {
  std::string s;
  s.reserve(tokens.size() * 5);
  for (int32_t t : tokens) s += WordFor(t);
  return s;
}

}  // namespace pg::bench
