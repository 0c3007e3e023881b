// CompiledConstraint and ConstraintMatcher: a grammar bound to a tokenizer's
// vocabulary, and one sequence's progress through it.
//
// The token mask of a matcher state: a bitset over the vocabulary (bit id of
// word id / 64) of the tokens whose bytes keep the output a valid prefix of
// the grammar, plus the end-of-generation tokens when the output may end
// there. It is computed by walking the vocabulary trie (token_vocabulary.h)
// together with the matcher: a trie edge is followed only while the grammar
// accepts its byte, so a whole subtree of tokens sharing a rejected prefix
// is skipped at once. Masks are cached per matcher state (GrammarMatcher::Key)
// in the CompiledConstraint, so a state that repeats (inside any string, at
// the same schema position) costs one lookup and a copy after its first time.
// When the output can only end, the mask holds only the end-of-generation
// tokens (the value is complete: generation stops). When no token at all
// can continue (a grammar byte no token writes), the mask holds the
// end-of-generation tokens too, so a sequence is never stuck.
//
// Thread-safety: CompiledConstraint is shared by every sequence using it and
// by the HTTP threads that look it up; Mask() locks its cache (mutex). A
// ConstraintMatcher is per-sequence state touched by one thread (the engine's).
#pragma once

#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "constrain/grammar.h"
#include "constrain/grammar_matcher.h"
#include "constrain/token_vocabulary.h"

namespace pg {

using TokenBitmask = std::vector<uint64_t>;  // (ceil(n_vocab / 64)) bit i = token i allowed

inline bool MaskHas(const TokenBitmask& m, int64_t id) {
  const auto w = static_cast<size_t>(id >> 6);
  return w < m.size() && ((m[w] >> (id & 63)) & 1u);
}

class CompiledConstraint {
 public:
  // Masks kept per constraint (each is n_vocab / 8 bytes: 19 KB at 150k).
  static constexpr size_t kMaxCachedMasks = 512;

  CompiledConstraint(Grammar grammar, std::shared_ptr<const TokenVocabulary> vocab, std::string description);

  const Grammar& grammar() const { return grammar_; }
  const TokenVocabulary& vocab() const { return *vocab_; }
  const std::string& description() const { return description_; }  // e.g. "json_schema 'person'"

  // The mask of `m`'s state into *out (cached).
  void Mask(const GrammarMatcher& m, TokenBitmask* out) const;
  // The same, computed without the cache (benchmarks, tests).
  void ComputeMask(const GrammarMatcher& m, TokenBitmask* out) const;

  struct CacheStats {
    int64_t hits = 0, misses = 0;
  };
  CacheStats cache_stats() const;

 private:
  Grammar grammar_;
  std::shared_ptr<const TokenVocabulary> vocab_;
  std::string description_;
  mutable std::mutex mu_;
  // LRU of state key -> mask; the list holds keys, most recent first.
  mutable std::list<std::string> lru_;
  mutable std::unordered_map<std::string, std::pair<TokenBitmask, std::list<std::string>::iterator>> masks_;
  mutable CacheStats stats_;
};

class ConstraintMatcher {
 public:
  explicit ConstraintMatcher(std::shared_ptr<const CompiledConstraint> constraint);

  // The tokens allowed next (valid until the next Accept).
  const TokenBitmask& Allowed();
  // Takes a token the mask allowed; false (state unchanged) for any other.
  bool Accept(int32_t token);
  // An end-of-generation token was accepted: the constrained output ends
  // and only end-of-generation tokens remain allowed.
  bool finished() const { return finished_; }
  // finished() where the grammar may end: the output is a whole valid value.
  // False after a dead end (no token could continue, so the mask offered
  // only end-of-generation): the output is a valid prefix, cut short (the
  // engine reports finish_reason "length", docs/server.md).
  bool complete() const { return finished_ && !dead_end_; }
  const GrammarMatcher& matcher() const { return matcher_; }

 private:
  std::shared_ptr<const CompiledConstraint> c_;
  GrammarMatcher matcher_;
  TokenBitmask mask_;
  bool mask_valid_ = false;
  bool finished_ = false;
  bool dead_end_ = false;  // finished where the grammar could not end
};

}  // namespace pg
