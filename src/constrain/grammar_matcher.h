// GrammarMatcher: where a byte string stands in a Grammar — the set of live
// parses (a nondeterministic pushdown automaton: one stack of frames per
// alternative still alive), advanced one byte at a time.
//
// A frame is (node, pos, count): pos is the progress inside the node (bytes
// of a literal, child index of a sequence, lexer state of a string or
// number, KMP state of a trigger), count the items of a repeat or the bytes
// of a number or whitespace run. Stacks deeper than kMaxDepth frames die
// (this bounds `$ref` recursion), and at most kMaxStacks alternatives are
// followed (those beyond are dropped, in stack order).
//
// Thread-safety: a matcher is a value; distinct matchers may share a Grammar
// across threads.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "constrain/grammar.h"

namespace pg {

struct MatchFrame {
  NodeId node = 0;
  uint32_t pos = 0;
  uint32_t count = 0;
  auto operator<=>(const MatchFrame&) const = default;
};

class GrammarMatcher {
 public:
  static constexpr size_t kMaxDepth = 96;
  static constexpr size_t kMaxStacks = 64;

  using Stack = std::vector<MatchFrame>;
  using State = std::vector<Stack>;

  // At the start of `grammar` (which must outlive the matcher).
  explicit GrammarMatcher(const Grammar* grammar);

  // Consumes one byte; false (state unchanged) when no parse accepts it.
  bool Advance(uint8_t byte);
  // Consumes all of `bytes`; false (state unchanged) when any is rejected.
  bool AdvanceBytes(std::string_view bytes);
  // The bytes so far form a complete match (output may end here).
  bool CanEnd() const;
  // Some byte may still follow.
  bool CanContinue() const;

  // Canonical encoding of the state (equal states, equal keys): the mask
  // cache's key.
  void Key(std::string* out) const;

  const State& state() const { return state_; }
  // `out` = the states reached from `in` by `byte` (empty: rejected).
  static void Step(const Grammar& g, const State& in, uint8_t byte, State* out);
  static bool Ends(const Grammar& g, const State& s);

  // `bytes`, fed inside a JSON string's body, leave it inside the body (no
  // closing quote, escapes and UTF-8 sequences complete): such a token is
  // allowed wherever InUnboundedStringBody holds (the mask's fast path).
  static bool KeepsStringBody(std::string_view bytes);
  // Every live parse is inside the body of a string with no length bound.
  static bool InUnboundedStringBody(const Grammar& g, const State& s);

 private:
  const Grammar* g_;
  State state_;
};

}  // namespace pg
