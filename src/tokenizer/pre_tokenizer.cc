#include "tokenizer/pre_tokenizer.h"

#include <algorithm>
#include <iterator>

#include "tokenizer/unicode.h"

namespace pg {
namespace {

// Lengths (in code points) of the pieces of a fragment.
using Pieces = std::vector<size_t>;

// The category class llama.cpp's pre-tokenizer sees. Regexes that use
// \p{..} run over a "collapsed" text in which every non-ASCII whitespace
// code point counts as whitespace only (never as a letter, number, ...).
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
  static bool P(uint32_t c) {
    if (c < 0x80) {
      // ASCII punctuation per Unicode: !"#%&'()*,-./:;?@[\]_{}
      switch (c) {
        case '!': case '"': case '#': case '%': case '&': case '\'': case '(': case ')':
        case '*': case ',': case '-': case '.': case '/': case ':': case ';': case '?':
        case '@': case '[': case '\\': case ']': case '_': case '{': case '}':
          return true;
        default:
          return false;
      }
    }
    return !IsWhitespace(c) && IsPunctuation(c);
  }
};

bool InRanges(uint32_t c, const uint32_t (*ranges)[2], size_t n) {
  for (size_t i = 0; i < n; ++i) {
    if (c < ranges[i][0]) return false;
    if (c <= ranges[i][1]) return true;
  }
  return false;
}

// deepseek-llm's letter class (Unicode cased letters as listed in its
// tokenizer.json regex), sorted.
constexpr uint32_t kDeepseekLetters[][2] = {
    {0x0041, 0x005A}, {0x0061, 0x007A}, {0x00B5, 0x00B5}, {0x00C0, 0x00D6}, {0x00D8, 0x00F6},
    {0x00F8, 0x01BA}, {0x01BC, 0x01BF}, {0x01C4, 0x0293}, {0x0295, 0x02AF}, {0x0370, 0x0373},
    {0x0376, 0x0377}, {0x037B, 0x037D}, {0x037F, 0x037F}, {0x0386, 0x0386}, {0x0388, 0x038A},
    {0x038C, 0x038C}, {0x038E, 0x03A1}, {0x03A3, 0x03F5}, {0x03F7, 0x0481}, {0x048A, 0x052F},
    {0x0531, 0x0556}, {0x10A0, 0x10C5}, {0x13A0, 0x13F5}, {0x13F8, 0x13FD}, {0x1C90, 0x1CBA},
    {0x1CBD, 0x1CBF}, {0x1D00, 0x1D2B}, {0x1D6B, 0x1D77}, {0x1D79, 0x1D9A}, {0x1E00, 0x1F15},
    {0x1F18, 0x1F1D}, {0x1F20, 0x1F45}, {0x1F48, 0x1F4D}, {0x1F50, 0x1F57}, {0x1F59, 0x1F59},
    {0x1F5B, 0x1F5B}, {0x1F5D, 0x1F5D}, {0x1F5F, 0x1F7D}, {0x1F80, 0x1FB4}, {0x1FB6, 0x1FBC},
    {0x1FBE, 0x1FBE}, {0x1FC2, 0x1FC4}, {0x1FC6, 0x1FCC}, {0x1FD0, 0x1FD3}, {0x1FD6, 0x1FDB},
    {0x1FE0, 0x1FEC}, {0x1FF2, 0x1FF4}, {0x1FF6, 0x1FFC}, {0x2102, 0x2102}, {0x2107, 0x2107},
    {0x210A, 0x2113}, {0x2115, 0x2115}, {0x2119, 0x211D}, {0x2124, 0x2124}, {0x2126, 0x2126},
    {0x2128, 0x2128}, {0x212A, 0x212D}, {0x212F, 0x2134}, {0x2139, 0x2139}, {0x213C, 0x213F},
    {0x2145, 0x2149}, {0x214E, 0x214E}, {0x2183, 0x2184}, {0x2C00, 0x2C7B}, {0x2C7E, 0x2CE4},
    {0x2CEB, 0x2CEE}, {0x2CF2, 0x2CF3}, {0xA640, 0xA66D}, {0xA680, 0xA69B}, {0xA722, 0xA76F},
    {0xA771, 0xA787}, {0xA78B, 0xA78E}, {0xAB70, 0xABBF}, {0xFB00, 0xFB06}, {0xFB13, 0xFB17},
    {0xFF21, 0xFF3A}, {0xFF41, 0xFF5A}, {0x10400, 0x1044F}, {0x104B0, 0x104D3},
    {0x104D8, 0x104FB}, {0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2}, {0x118A0, 0x118DF},
    {0x1E900, 0x1E943},
};

// deepseek-llm's punctuation class: [!-/:-~！-／：-～‘-‟　-。], sorted.
constexpr uint32_t kDeepseekPunct[][2] = {
    {0x21, 0x2F}, {0x3A, 0x7E}, {0x2018, 0x201F}, {0x3000, 0x3002}, {0xFF01, 0xFF0F}, {0xFF1A, 0xFF5E},
};

// CJK class shared by the deepseek pre-tokenizers: [一-龥ࠀ-一가-퟿].
bool IsDeepseekCjk(uint32_t c) {
  return (c >= 0x0800 && c <= 0x9FA5) || (c >= 0xAC00 && c <= 0xD7FF);
}

// Regexes without \p{..} run over the original code points, except that
// llama.cpp rewrites non-ASCII whitespace to U+000B first; class tests must
// see that rewritten value.
uint32_t Rewritten(uint32_t c) { return c > 0x7F && IsWhitespace(c) ? 0x0B : c; }

// Emulates regex_iterator over one piece: every match becomes a piece, and
// so does every non-empty gap between matches. match(c, n, i) returns the
// length of the match starting at i (0 = none) and must cost O(1) when it
// fails, so the scan stays linear.
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

// Matcher for CLASS+ (one or more).
template <typename Pred>
auto RunOf(Pred pred) {
  return [pred](const uint32_t* c, size_t n, size_t i) -> size_t {
    size_t j = i;
    while (j < n && pred(c[j])) ++j;
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

// Matcher for a single code point of a class.
template <typename Pred>
auto OneOf(Pred pred) {
  return [pred](const uint32_t* c, size_t n, size_t i) -> size_t { return pred(c[i]) ? 1 : 0; };
}

bool IsCrLf(uint32_t c) { return c == '\r' || c == '\n'; }

// The patterns' common tail, \s+(?!\S) | \s+ | . at `pos`, where a run of `ws`
// whitespace code points starts (ws may be 0): the length of the piece.
size_t WhitespaceOrOne(size_t pos, size_t ws, size_t n) {
  if (ws > 1 && pos + ws < n) return ws - 1;  // \s+(?!\S): leave the last space for the next word
  if (ws > 0) return ws;
  return 1;
}

// \s+$ : the maximal run of whitespace that ends the piece.
void SplitTrailingSpace(const uint32_t* c, size_t n, Pieces* out) {
  size_t j = n;
  while (j > 0 && Cp::Ws(c[j - 1])) --j;
  if (j > 0) out->push_back(j);
  if (j < n) out->push_back(n - j);
}

// GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
void SplitGpt2(const uint32_t* c, size_t n, Pieces* out) {
  auto L = [&](size_t p) { return p < n && Cp::L(c[p]); };
  auto N = [&](size_t p) { return p < n && Cp::N(c[p]); };
  auto Ws = [&](size_t p) { return p < n && Cp::Ws(c[p]); };
  auto Other = [&](size_t p) { return p < n && !Cp::Ws(c[p]) && !Cp::L(c[p]) && !Cp::N(c[p]); };
  size_t pos = 0;
  while (pos < n) {
    const uint32_t cpt = c[pos];
    if (cpt == '\'' && pos + 1 < n) {
      const uint32_t c1 = c[pos + 1];
      if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd') {
        out->push_back(2);
        pos += 2;
        continue;
      }
      if (pos + 2 < n) {
        const uint32_t c2 = c[pos + 2];
        if ((c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l')) {
          out->push_back(3);
          pos += 3;
          continue;
        }
      }
    }
    const size_t q = cpt == ' ' ? pos + 1 : pos;  // where the class run would start
    if (L(q) || N(q) || Other(q)) {
      size_t e = q;
      if (L(q)) {
        while (L(e)) ++e;
      } else if (N(q)) {
        while (N(e)) ++e;
      } else {
        while (Other(e)) ++e;
      }
      out->push_back(e - pos);
      pos = e;
      continue;
    }
    size_t ws = 0;
    while (Ws(pos + ws)) ++ws;
    const size_t len = WhitespaceOrOne(pos, ws, n);
    out->push_back(len);
    pos += len;
  }
}

// Llama 3 / Qwen2:
// (?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\r\n\p{L}\p{N}]?\p{L}+|\p{N}{1,max_digits}
//  | ?[^\s\p{L}\p{N}]+[\r\n]*|\s*[\r\n]+|\s+(?!\S)|\s+
void SplitLlama3(const uint32_t* c, size_t n, size_t max_digits, Pieces* out) {
  auto L = [&](size_t p) { return p < n && Cp::L(c[p]); };
  auto N = [&](size_t p) { return p < n && Cp::N(c[p]); };
  auto Ws = [&](size_t p) { return p < n && Cp::Ws(c[p]); };
  auto Other = [&](size_t p) { return p < n && !Cp::Ws(c[p]) && !Cp::L(c[p]) && !Cp::N(c[p]); };
  auto lower = [](uint32_t x) { return x >= 'A' && x <= 'Z' ? x + 32 : x; };
  size_t pos = 0;
  while (pos < n) {
    const uint32_t cpt = c[pos];
    if (cpt == '\'' && pos + 1 < n) {
      const uint32_t c1 = lower(c[pos + 1]);
      if (c1 == 's' || c1 == 't' || c1 == 'm' || c1 == 'd') {
        out->push_back(2);
        pos += 2;
        continue;
      }
      if (pos + 2 < n) {
        const uint32_t c2 = lower(c[pos + 2]);
        if ((c1 == 'r' && c2 == 'e') || (c1 == 'v' && c2 == 'e') || (c1 == 'l' && c2 == 'l')) {
          out->push_back(3);
          pos += 3;
          continue;
        }
      }
    }
    // [^\r\n\p{L}\p{N}]?\p{L}+
    if (!IsCrLf(cpt) && !N(pos) && (L(pos) || L(pos + 1))) {
      size_t e = pos + 1;
      while (L(e)) ++e;
      out->push_back(e - pos);
      pos = e;
      continue;
    }
    // \p{N}{1,max_digits}
    if (N(pos)) {
      size_t e = pos;
      while (N(e) && e - pos < max_digits) ++e;
      out->push_back(e - pos);
      pos = e;
      continue;
    }
    // ' ?[^\s\p{L}\p{N}]+[\r\n]*'
    const size_t q = cpt == ' ' ? pos + 1 : pos;
    if (Other(q) || (cpt == ' ' && q == n)) {
      size_t e = q;
      while (Other(e)) ++e;
      while (e < n && IsCrLf(c[e])) ++e;
      out->push_back(e - pos);
      pos = e;
      continue;
    }
    size_t ws = 0;
    size_t last_crlf_end = 0;
    while (Ws(pos + ws)) {
      if (IsCrLf(c[pos + ws])) last_crlf_end = pos + ws + 1;
      ++ws;
    }
    if (last_crlf_end > 0) {  // \s*[\r\n]+
      out->push_back(last_crlf_end - pos);
      pos = last_crlf_end;
      continue;
    }
    const size_t len = WhitespaceOrOne(pos, ws, n);
    out->push_back(len);
    pos += len;
  }
}

// One pass of the pipeline over every current piece.
template <typename SplitFn>
Pieces ApplyPass(const std::vector<uint32_t>& cpts, const Pieces& in, SplitFn split) {
  Pieces out;
  out.reserve(in.size() * 2);
  size_t start = 0;
  for (size_t len : in) {
    split(cpts.data() + start, len, &out);
    start += len;
  }
  return out;
}

}  // namespace

Result<PreTokenizerKind> PreTokenizerFromName(const std::string& pre) {
  static const struct {
    const char* name;
    PreTokenizerKind kind;
  } kNames[] = {
      {"", PreTokenizerKind::kDefault},
      {"default", PreTokenizerKind::kDefault},
      {"gpt-2", PreTokenizerKind::kGpt2},
      {"phi-2", PreTokenizerKind::kGpt2},
      {"jina-es", PreTokenizerKind::kGpt2},
      {"jina-de", PreTokenizerKind::kGpt2},
      {"gigachat", PreTokenizerKind::kGpt2},
      {"jina-v2-es", PreTokenizerKind::kGpt2},
      {"jina-v2-de", PreTokenizerKind::kGpt2},
      {"mellum", PreTokenizerKind::kGpt2},
      {"exaone4", PreTokenizerKind::kGpt2},
      {"mpt", PreTokenizerKind::kGpt2},
      {"olmo", PreTokenizerKind::kGpt2},
      {"llama3", PreTokenizerKind::kLlama3},
      {"llama-v3", PreTokenizerKind::kLlama3},
      {"llama-bpe", PreTokenizerKind::kLlama3},
      {"falcon3", PreTokenizerKind::kLlama3},
      {"pixtral", PreTokenizerKind::kLlama3},
      {"dbrx", PreTokenizerKind::kLlama3},
      {"smaug-bpe", PreTokenizerKind::kLlama3},
      {"qwen2", PreTokenizerKind::kQwen2},
      {"deepseek-r1-qwen", PreTokenizerKind::kQwen2},
      {"megrez", PreTokenizerKind::kQwen2},
      {"stablelm2", PreTokenizerKind::kQwen2},
      {"deepseek-llm", PreTokenizerKind::kDeepseekLlm},
      {"deepseek-coder", PreTokenizerKind::kDeepseekCoder},
      {"falcon", PreTokenizerKind::kFalcon},
  };
  for (const auto& e : kNames) {
    if (pre == e.name) return e.kind;
  }
  return InvalidArgument("unsupported tokenizer pre-tokenizer '" + pre + "'");
}

std::vector<size_t> PreTokenize(PreTokenizerKind kind, const std::vector<uint32_t>& cpts) {
  if (cpts.empty()) return {};
  Pieces pieces = {cpts.size()};
  auto pass = [&](auto split) { pieces = ApplyPass(cpts, pieces, split); };
  auto by = [](auto match) {
    return [match](const uint32_t* c, size_t n, Pieces* out) { SplitByMatches(c, n, match, out); };
  };
  const auto cr_lf = OneOf(IsCrLf);
  switch (kind) {
    case PreTokenizerKind::kGpt2:
      pass(SplitGpt2);
      break;
    case PreTokenizerKind::kLlama3:
      pass([](const uint32_t* c, size_t n, Pieces* out) { SplitLlama3(c, n, 3, out); });
      break;
    case PreTokenizerKind::kQwen2:
      pass([](const uint32_t* c, size_t n, Pieces* out) { SplitLlama3(c, n, 1, out); });
      break;
    case PreTokenizerKind::kDeepseekLlm:
      pass(by(cr_lf));
      pass(by(SpaceThenRunOf([](uint32_t x) {
        return InRanges(Rewritten(x), kDeepseekLetters, std::size(kDeepseekLetters));
      })));
      pass(by(SpaceThenRunOf([](uint32_t x) {
        return InRanges(Rewritten(x), kDeepseekPunct, std::size(kDeepseekPunct));
      })));
      pass(SplitTrailingSpace);
      pass(by(RunOf([](uint32_t x) { return IsDeepseekCjk(Rewritten(x)); })));
      pass(by(RunOf(Cp::N)));
      break;
    case PreTokenizerKind::kDeepseekCoder:
      pass(by(cr_lf));
      pass(by(SpaceThenRunOf(Cp::L)));
      pass(by(SpaceThenRunOf(Cp::P)));
      pass(by(RunOf([](uint32_t x) { return IsDeepseekCjk(Rewritten(x)); })));
      pass(by(OneOf(Cp::N)));
      break;
    case PreTokenizerKind::kFalcon:
    case PreTokenizerKind::kDefault: {
      // [\p{P}\$\+<=>\^~\|`]+ (falcon) / [\p{P}\$\+<=>\^~\|]+ (default)
      const bool backtick = kind == PreTokenizerKind::kFalcon;
      pass(by(RunOf([backtick](uint32_t x) {
        switch (x) {
          case '$': case '+': case '<': case '=': case '>': case '^': case '~': case '|':
            return true;
          case '`':
            return backtick;
          default:
            return Cp::P(x);
        }
      })));
      pass(SplitGpt2);
      if (kind == PreTokenizerKind::kDefault) pass(by(RunOf(Cp::N)));
      // [0-9][0-9][0-9]
      pass(by([](const uint32_t* c, size_t n, size_t i) -> size_t {
        auto d = [&](size_t p) { return p < n && c[p] >= '0' && c[p] <= '9'; };
        return d(i) && d(i + 1) && d(i + 2) ? 3 : 0;
      }));
      break;
    }
  }
  return pieces;
}

}  // namespace pg
