// Word matchers shared by the pre-tokenizers (see pre_tokenizer_scan.h).
// Each one follows the leftmost-alternative-first order of the ECMAScript
// regex llama.cpp runs, with backtracking worked out by hand.
#include "tokenizer/pre_tokenizer_scan.h"

namespace pg::pretok {
namespace {

bool InPiece(size_t p, size_t n) { return p < n; }

// Ends a whitespace run at i: \s*[\r\n]+ (through the last CR/LF of the run)
// when with_crlf_group, then \s+(?!\S)|\s+. 0 when c[i] is not whitespace.
size_t MatchSpaces(const uint32_t* c, size_t n, size_t i, bool with_crlf_group) {
  size_t ws = 0;
  size_t last_crlf_end = 0;
  while (i + ws < n && Cp::Ws(c[i + ws])) {
    if (Cp::CrLf(c[i + ws])) last_crlf_end = i + ws + 1;
    ++ws;
  }
  if (ws == 0) return 0;
  if (with_crlf_group && last_crlf_end > 0) return last_crlf_end - i;
  return WhitespaceRun(i, ws, n);
}

// jais-2's whitespace: \s{512}(?!\S)|...|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1} on a
// run of ws spaces at pos: the longest power of two that leaves a space (or
// the end of the piece) behind it.
size_t HalvingRun(size_t pos, size_t ws, size_t n) {
  const bool at_end = pos + ws == n;
  for (size_t len = 512; len >= 4; len /= 2) {
    if (ws > len || (ws == len && at_end)) return len;
  }
  return ws > 2 || (ws == 2 && at_end) ? 2 : 1;
}

// " ?[^\s\p{L}\p{N}]+" at i, then [\r\n] (and '/' when `slash`): a run of
// them when `many`, else at most one. 0 when no such run starts at i.
size_t MatchSymbols(const uint32_t* c, size_t n, size_t i, bool slash, bool many) {
  auto other = [&](size_t p) { return InPiece(p, n) && !Cp::Ws(c[p]) && !Cp::L(c[p]) && !Cp::N(c[p]); };
  auto trailer = [&](size_t p) { return InPiece(p, n) && (Cp::CrLf(c[p]) || (slash && c[p] == '/')); };
  const size_t q = c[i] == ' ' ? i + 1 : i;
  if (!other(q)) return 0;
  size_t e = q;
  while (other(e)) ++e;
  if (many) {
    while (trailer(e)) ++e;
  } else if (trailer(e)) {
    ++e;
  }
  return e - i;
}

}  // namespace

size_t ContractionAt(const uint32_t* c, size_t n, size_t i, bool any_case) {
  if (i + 1 >= n || c[i] != '\'') return 0;
  auto fold = [any_case](uint32_t x) { return any_case && x >= 'A' && x <= 'Z' ? x + 32 : x; };
  const uint32_t c1 = fold(c[i + 1]);
  if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd') return 2;
  if (i + 2 >= n) return 0;
  const uint32_t c2 = fold(c[i + 2]);
  if ((c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l')) return 3;
  return 0;
}

bool IsHan(uint32_t c) {
  return (c >= 0x4E00 && c <= 0x9FFF) || (c >= 0x3400 && c <= 0x4DBF) || (c >= 0x20000 && c <= 0x2A6DF) ||
         (c >= 0x2A700 && c <= 0x2EBEF) || (c >= 0xF900 && c <= 0xFAFF) || (c >= 0x2F800 && c <= 0x2FA1F);
}

size_t MatchWord(const WordRules& r, const uint32_t* c, size_t n, size_t i) {
  auto letter = [&](size_t p) { return InPiece(p, n) && (Cp::L(c[p]) || (r.marks_are_letters && Cp::M(c[p]))); };
  auto other = [&](size_t p) { return InPiece(p, n) && !Cp::Ws(c[p]) && !letter(p) && !Cp::N(c[p]); };
  if (r.contractions) {
    if (size_t k = ContractionAt(c, n, i, true)) return k;
  }
  const uint32_t x = c[i];
  // [^\r\n\p{L}\p{N}]?LETTER+
  if (letter(i) || (!Cp::CrLf(x) && !Cp::L(x) && !Cp::N(x) && letter(i + 1))) {
    size_t e = i + 1;
    while (letter(e)) ++e;
    return e - i;
  }
  if (Cp::N(x)) {  // \p{N}{1,max_digits}
    size_t e = i;
    while (e < n && e - i < r.max_digits && Cp::N(c[e])) ++e;
    return e - i;
  }
  const size_t q = x == ' ' ? i + 1 : i;  //  ?[^\s LETTER \p{N}]+[\r\n]*
  if (other(q)) {
    size_t e = q;
    while (other(e)) ++e;
    while (r.crlf_tail && e < n && Cp::CrLf(c[e])) ++e;
    return e - i;
  }
  if (!r.halving_spaces) return MatchSpaces(c, n, i, true);
  size_t ws = 0;
  bool crlf = false;
  while (i + ws < n && Cp::Ws(c[i + ws])) crlf |= Cp::CrLf(c[i + ws++]);
  if (crlf) return MatchSpaces(c, n, i, true);
  return ws == 0 ? 0 : HalvingRun(i, ws, n);
}

void SplitWords(const WordRules& r, const uint32_t* c, size_t n, Pieces* out) {
  size_t i = 0;
  while (i < n) {
    if (r.halving_spaces) {
      // Inside a run of 2+ spaces without CR/LF only the \s{..}(?!\S) groups
      // can match; the run's last space is left to MatchWord (it may lead a word).
      size_t ws = 0;
      bool crlf = false;
      while (i + ws < n && Cp::Ws(c[i + ws])) crlf |= Cp::CrLf(c[i + ws++]);
      while (!crlf && ws >= 2) {
        const size_t len = HalvingRun(i, ws, n);
        out->push_back(len);
        i += len;
        ws -= len;
      }
    }
    if (i >= n) break;
    const size_t len = MatchWord(r, c, n, i);
    out->push_back(len > 0 ? len : 1);
    i += len > 0 ? len : 1;
  }
}

size_t MatchCased(const CasedRules& r, const uint32_t* c, size_t n, size_t i) {
  const bool with_marks = r.marks || r.case_blind;
  auto is_l = [&](size_t p) { return InPiece(p, n) && (Cp::L(c[p]) || (with_marks && Cp::M(c[p]))); };
  auto upper = [&](size_t p) { return is_l(p) && (r.case_blind || !(c[p] >= 'a' && c[p] <= 'z')); };
  auto lower = [&](size_t p) { return is_l(p) && (r.case_blind || !(c[p] >= 'A' && c[p] <= 'Z')); };
  // UPPER*LOWER+ from s: UPPER* gives back code points until LOWER+ can
  // start; the end of the match, or 0.
  auto upper_then_lower = [&](size_t s) -> size_t {
    size_t e = s;
    while (upper(e)) ++e;
    for (size_t k = e + 1; k-- > s;) {
      if (!lower(k)) continue;
      size_t f = k + 1;
      while (lower(f)) ++f;
      return f;
    }
    return 0;
  };
  // UPPER+LOWER* from s; the end of the match, or 0.
  auto upper_plus = [&](size_t s) -> size_t {
    if (!upper(s)) return 0;
    size_t e = s + 1;
    while (upper(e)) ++e;
    while (lower(e)) ++e;
    return e;
  };
  const uint32_t x = c[i];
  const bool lead = !Cp::CrLf(x) && !Cp::L(x) && !Cp::N(x);  // [^\r\n\p{L}\p{N}]
  size_t end = lead ? upper_then_lower(i + 1) : 0;
  if (end == 0) end = upper_then_lower(i);
  if (end == 0 && lead) end = upper_plus(i + 1);
  if (end == 0) end = upper_plus(i);
  if (end > 0) {
    if (r.contractions) end += ContractionAt(c, n, end, true);
    return end - i;
  }
  if (Cp::N(x)) {
    size_t e = i;
    while (e < n && e - i < r.max_digits && Cp::N(c[e])) ++e;
    return e - i;
  }
  //  ?[^\s\p{L}\p{N}]+[\r\n/]*
  if (size_t k = MatchSymbols(c, n, i, /*slash=*/true, /*many=*/true)) return k;
  return MatchSpaces(c, n, i, true);
}

size_t MatchDeepseekV3Word(bool lone_newline, const uint32_t* c, size_t n, size_t i) {
  auto ascii_punct = [](uint32_t x) {
    return (x >= 0x21 && x <= 0x2F) || (x >= 0x3A && x <= 0x40) || (x >= 0x5B && x <= 0x60) || (x >= 0x7B && x <= 0x7E);
  };
  auto lm = [&](size_t p) { return InPiece(p, n) && (Cp::L(c[p]) || Cp::M(c[p])); };
  auto ps = [&](size_t p) { return InPiece(p, n) && (Cp::P(c[p]) || Cp::S(c[p])); };
  const uint32_t x = c[i];
  if (ascii_punct(x) && i + 1 < n && Cp::AsciiLetter(c[i + 1])) {  // [!-/:-@[-`{-~][A-Za-z]+
    size_t e = i + 2;
    while (e < n && Cp::AsciiLetter(c[e])) ++e;
    return e - i;
  }
  // [^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+
  const bool lead = !Cp::CrLf(x) && !Cp::L(x) && !Cp::P(x) && !Cp::S(x);
  if (lm(i) || (lead && lm(i + 1))) {
    size_t e = i + 1;
    while (lm(e)) ++e;
    return e - i;
  }
  const size_t q = x == ' ' ? i + 1 : i;  //  ?[\p{P}\p{S}]+[\r\n]*
  if (ps(q)) {
    size_t e = q;
    while (ps(e)) ++e;
    while (!lone_newline && e < n && Cp::CrLf(c[e])) ++e;
    return e - i;
  }
  if (lone_newline && Cp::CrLf(x)) return 1;  // [\r\n]
  return MatchSpaces(c, n, i, !lone_newline);
}

size_t MatchKimiK2(const uint32_t* c, size_t n, size_t i) {
  auto word_letter = [&](size_t p) { return InPiece(p, n) && Cp::L(c[p]) && !IsHan(c[p]); };
  const uint32_t x = c[i];
  if (IsHan(x)) {  // \p{Han}+
    size_t e = i + 1;
    while (e < n && IsHan(c[e])) ++e;
    return e - i;
  }
  const bool lead = !Cp::CrLf(x) && !Cp::L(x) && !Cp::N(x);
  if (word_letter(i) || (lead && word_letter(i + 1))) {
    size_t e = i + 1;
    while (word_letter(e)) ++e;
    e += ContractionAt(c, n, e, true);
    return e - i;
  }
  // A lead before a Han letter falls through to the groups below.
  if (Cp::N(x)) {  // \p{N}{1,3}
    size_t e = i;
    while (e < n && e - i < 3 && Cp::N(c[e])) ++e;
    return e - i;
  }
  //  ?[^\s\p{L}\p{N}]+[\r\n]*
  if (size_t k = MatchSymbols(c, n, i, /*slash=*/false, /*many=*/true)) return k;
  return MatchSpaces(c, n, i, true);
}

size_t MatchExaoneMoe(const uint32_t* c, size_t n, size_t i) {
  if (size_t k = ContractionAt(c, n, i, true)) return k;
  auto letter = [&](size_t p) { return InPiece(p, n) && Cp::L(c[p]); };
  auto mark = [&](size_t p) { return InPiece(p, n) && Cp::M(c[p]); };
  const uint32_t x = c[i];
  const bool lead = !Cp::CrLf(x) && !Cp::L(x) && !Cp::N(x);
  if (letter(i) || (lead && letter(i + 1))) {
    // (?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+ : letters and marks, and single
    // spaces that a letter follows.
    size_t e = letter(i) ? i + 1 : i + 2;
    while (true) {
      if (letter(e) || mark(e)) {
        ++e;
      } else if (e < n && c[e] == ' ' && letter(e + 1)) {
        e += 2;
      } else {
        break;
      }
    }
    return e - i;
  }
  if (Cp::N(x)) return 1;
  //  ?[^\s\p{L}\p{N}]+[\r\n/]?
  if (size_t k = MatchSymbols(c, n, i, /*slash=*/true, /*many=*/false)) return k;
  // \s*[\r\n] ends where \s*[\r\n]+ does: after the run's last CR/LF.
  return MatchSpaces(c, n, i, true);
}

size_t MatchPoroWord(const uint32_t* c, size_t n, size_t i) {
  auto stop = [](uint32_t x) {
    switch (x) {
      case '(':
      case '|':
      case ')':
      case '.':
      case ',':
      case '!':
      case '?':
      case 0x2026:
      case 0x3002:
      case 0xFF0C:
      case 0x3001:
      case 0x0964:
      case 0x06D4:
      case 0x060C: return true;
      default: return Cp::Ws(x);
    }
  };
  const size_t q = c[i] == ' ' ? i + 1 : i;
  if (q >= n || stop(c[q])) return 0;
  size_t e = q + 1;
  while (e < n && !stop(c[e])) ++e;
  return e - i;
}

}  // namespace pg::pretok
