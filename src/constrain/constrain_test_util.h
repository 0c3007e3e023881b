// Private test helpers for the constrain tests.
#pragma once

#include <gtest/gtest.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "constrain/constraint.h"
#include "constrain/grammar_matcher.h"

namespace pg::testing {

// The whole of `text` is a complete match.
inline bool Accepts(const Grammar& g, const std::string& text) {
  GrammarMatcher m(&g);
  return m.AdvanceBytes(text) && m.CanEnd();
}

// `text` is a valid prefix (may or may not be complete).
inline bool Prefix(const Grammar& g, const std::string& text) {
  GrammarMatcher m(&g);
  return m.AdvanceBytes(text);
}

// Follows random allowed tokens (the shortest of three draws, so values
// finish) for at most max_steps steps; the text before the end-of-generation
// token, or nullopt when the walk did not finish. Every step must allow a
// token and accept the one picked; where one does not, the test fails and
// the walk ends there.
inline std::optional<std::string> RandomWalk(ConstraintMatcher* cm, const TokenVocabulary& vocab, std::mt19937* rng,
                                             int max_steps) {
  std::string text;
  for (int step = 0; step < max_steps && !cm->finished(); ++step) {
    const TokenBitmask& allowed = cm->Allowed();
    std::vector<int32_t> ids;
    for (int32_t id = 0; id < vocab.n_vocab(); ++id)
      if (MaskHas(allowed, id)) ids.push_back(id);
    if (ids.empty()) {
      ADD_FAILURE() << "no token allowed after " << step << " steps: " << text;
      return std::nullopt;
    }
    int32_t pick = ids[(*rng)() % ids.size()];
    for (int k = 0; k < 2; ++k) {
      int32_t other = ids[(*rng)() % ids.size()];
      if (vocab.bytes(other).size() < vocab.bytes(pick).size()) pick = other;
    }
    if (!cm->Accept(pick)) {
      ADD_FAILURE() << "allowed token " << pick << " not accepted after: " << text;
      return std::nullopt;
    }
    if (!cm->finished()) text += vocab.bytes(pick);
  }
  if (!cm->finished()) return std::nullopt;
  return text;
}

// The texts of those of `runs` random walks through grammar g (one rng
// seeded with `seed`) that finished.
inline std::vector<std::string> RandomWalks(Grammar g, const std::shared_ptr<const TokenVocabulary>& vocab,
                                            uint32_t seed, int runs, int max_steps) {
  auto c = std::make_shared<const CompiledConstraint>(std::move(g), vocab, "test");
  std::mt19937 rng(seed);
  std::vector<std::string> finished;
  for (int run = 0; run < runs; ++run) {
    ConstraintMatcher cm(c);
    if (std::optional<std::string> text = RandomWalk(&cm, *vocab, &rng, max_steps)) finished.push_back(*text);
  }
  return finished;
}

}  // namespace pg::testing
