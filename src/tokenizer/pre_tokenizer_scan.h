// Building blocks of the pre-tokenizers (internal to src/tokenizer): the
// character classes llama.cpp's regexes see, a regex_iterator-style splitter
// driven by a "match at i" function, and the word matchers several
// pre-tokenizers share.
//
// A matcher is called as match(c, n, i) on one piece (c[0..n)) and returns
// the length of the match that starts at i, or 0 for none. It must cost O(1)
// when it fails and O(length) when it succeeds, so a split stays linear.
//
// Thread-safety: pure functions; safe from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tokenizer/unicode.h"

namespace pg::pretok {

// Lengths (in code points) of the pieces of a fragment.
using Pieces = std::vector<size_t>;

// The classes llama.cpp's regexes see. Where a regex uses \p{..}, llama.cpp
// runs it over a "collapsed" text: ASCII stays as it is and is classed by
// fixed ASCII lists; every other code point becomes its category (non-ASCII
// whitespace counts as whitespace only).
struct Cp {
  static bool Ws(uint32_t c) { return IsWhitespace(c); }
  static bool L(uint32_t c) {
    if (c < 0x80) return (c | 0x20) >= 'a' && (c | 0x20) <= 'z';
    return !IsWhitespace(c) && IsLetter(c);
  }
  static bool N(uint32_t c) {
    if (c < 0x80) return c >= '0' && c <= '9';
    return !IsWhitespace(c) && IsNumber(c);
  }
  // ASCII \p{P}: !"#%&'()*,-./:;?@[\]_{}
  static bool P(uint32_t c) {
    if (c < 0x80) {
      switch (c) {
        case '!':
        case '"':
        case '#':
        case '%':
        case '&':
        case '\'':
        case '(':
        case ')':
        case '*':
        case ',':
        case '-':
        case '.':
        case '/':
        case ':':
        case ';':
        case '?':
        case '@':
        case '[':
        case '\\':
        case ']':
        case '_':
        case '{':
        case '}': return true;
        default: return false;
      }
    }
    return !IsWhitespace(c) && IsPunctuation(c);
  }
  // ASCII \p{S} in llama.cpp's list: $+<=>^`| (not '~').
  static bool S(uint32_t c) {
    if (c < 0x80) {
      switch (c) {
        case '$':
        case '+':
        case '<':
        case '=':
        case '>':
        case '^':
        case '`':
        case '|': return true;
        default: return false;
      }
    }
    return !IsWhitespace(c) && CategoryOf(c) == UnicodeCategory::kSymbol;
  }
  // \p{M}: no ASCII code point is a mark.
  static bool M(uint32_t c) { return c >= 0x80 && !IsWhitespace(c) && CategoryOf(c) == UnicodeCategory::kMark; }
  static bool AsciiLetter(uint32_t c) { return c < 0x80 && L(c); }
  static bool AsciiDigit(uint32_t c) { return c >= '0' && c <= '9'; }
  static bool CrLf(uint32_t c) { return c == '\r' || c == '\n'; }
};

// Emulates std::regex_iterator over one piece: every match becomes a piece,
// and so does every non-empty gap between matches (a run of unmatched code
// points stays one piece).
template <typename Match>
void SplitByMatches(const uint32_t* c, size_t n, Match match, Pieces* out) {
  size_t gap_start = 0;
  size_t i = 0;
  while (i < n) {
    const size_t len = match(c, n, i);
    if (len == 0) {
      ++i;
      continue;
    }
    if (i > gap_start) out->push_back(i - gap_start);
    out->push_back(len);
    i += len;
    gap_start = i;
  }
  if (n > gap_start) out->push_back(n - gap_start);
}

// Matcher for CLASS{1,max} (max = SIZE_MAX for CLASS+).
template <typename Pred>
auto RunOf(Pred pred, size_t max = SIZE_MAX) {
  return [pred, max](const uint32_t* c, size_t n, size_t i) -> size_t {
    size_t j = i;
    while (j < n && j - i < max && pred(c[j])) ++j;
    return j - i;
  };
}

// Matcher for \s?CLASS+ .
template <typename Pred>
auto SpaceThenRunOf(Pred pred) {
  return [pred](const uint32_t* c, size_t n, size_t i) -> size_t {
    size_t j = i;
    if (Cp::Ws(c[j]) && j + 1 < n && pred(c[j + 1])) ++j;
    if (!pred(c[j])) return 0;
    while (j < n && pred(c[j])) ++j;
    return j - i;
  };
}

// Length of the English contraction at i ('s 't 're 've 'm 'll 'd), or 0.
// any_case: also 'S, 'Re, ... as (?i:...) or '[sS] spell it.
size_t ContractionAt(const uint32_t* c, size_t n, size_t i, bool any_case);

// The common whitespace tail \s+(?!\S)|\s+ for a run of ws >= 1 whitespace
// code points at pos: the last space is left for the next word unless the
// run ends the piece.
inline size_t WhitespaceRun(size_t pos, size_t ws, size_t n) { return ws > 1 && pos + ws < n ? ws - 1 : ws; }

// Llama 3 shaped word splitter, parameterised for its relatives:
//   (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?LETTER+|\p{N}{1,max_digits}
//   | ?[^\s LETTER \p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
struct WordRules {
  bool contractions = true;        // ufakzeka drops the contraction group
  bool marks_are_letters = false;  // qwen35: LETTER = [\p{L}\p{M}]
  size_t max_digits = 3;           // 1 for qwen2 and kin, SIZE_MAX for \p{N}+
  bool crlf_tail = true;           // [\r\n]* after a punctuation run (seed-coder: none)
  bool halving_spaces = false;     // jais-2: \s{512}(?!\S)|\s{256}(?!\S)|...|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1}
};
size_t MatchWord(const WordRules& r, const uint32_t* c, size_t n, size_t i);
// Splits a piece with MatchWord (which matches at every position). With
// halving_spaces it cuts a whole space run at once, so a long run costs
// O(length), not O(length^2 / 512).
void SplitWords(const WordRules& r, const uint32_t* c, size_t n, Pieces* out);

// GPT-4o shaped splitter (letters split at lower->upper case changes):
//   [^\r\n\p{L}\p{N}]?UPPER*LOWER+C?|[^\r\n\p{L}\p{N}]?UPPER+LOWER*C?|\p{N}{1,max_digits}
//   | ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
// As llama.cpp spells the cased classes, UPPER = letter but not a-z and
// LOWER = letter but not A-Z, so a non-ASCII letter is both.
struct CasedRules {
  bool contractions = true;  // C = optional ('s|'t|...), any case
  bool marks = false;        // granite-embed-multi: the letter test is [\p{L}\p{M}]
  bool case_blind = false;   // youtu, tiny_aya: llama.cpp reads \p{Lu}.. as \p{L}: UPPER = LOWER = [\p{L}\p{M}]
  size_t max_digits = 3;
};
size_t MatchCased(const CasedRules& r, const uint32_t* c, size_t n, size_t i);

// DeepSeek-V3's word regex (also hunyuan-dense, afmoe, spark2_5):
//   [!-/:-@[-`{-~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*
//   |\s*[\r\n]+|\s+(?!\S)|\s+
// spark2_5 (lone_newline): no [\r\n]* tail, and [\r\n] instead of \s*[\r\n]+.
size_t MatchDeepseekV3Word(bool lone_newline, const uint32_t* c, size_t n, size_t i);

// Kimi K2's splitter: llama.cpp's custom scanner for
//   \p{Han}+|[^\r\n\p{L}\p{N}]?[letters but Han]+C?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*
//   |\s*[\r\n]+|\s+(?!\S)|\s+
size_t MatchKimiK2(const uint32_t* c, size_t n, size_t i);

// EXAONE MoE: words glue across single spaces:
//   (?i:'s|...)|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}
//   | ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+
size_t MatchExaoneMoe(const uint32_t* c, size_t n, size_t i);

// Poro / BLOOM / GPT-3 Finnish:  ?[^(\s|.,!?…。，、।۔،)]+
size_t MatchPoroWord(const uint32_t* c, size_t n, size_t i);

// Han as llama.cpp's unicode_cpt_is_han (CJK ideograph blocks).
bool IsHan(uint32_t c);

}  // namespace pg::pretok
