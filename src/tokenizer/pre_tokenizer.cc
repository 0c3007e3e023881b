#include "tokenizer/pre_tokenizer.h"

#include <iterator>

#include "tokenizer/pre_tokenizer_scan.h"
#include "tokenizer/unicode.h"

namespace pg {
namespace {

using pretok::Cp;
using pretok::Pieces;
using pretok::RunOf;
using pretok::SplitByMatches;

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
    {0x0041, 0x005A},   {0x0061, 0x007A},   {0x00B5, 0x00B5},   {0x00C0, 0x00D6},   {0x00D8, 0x00F6},
    {0x00F8, 0x01BA},   {0x01BC, 0x01BF},   {0x01C4, 0x0293},   {0x0295, 0x02AF},   {0x0370, 0x0373},
    {0x0376, 0x0377},   {0x037B, 0x037D},   {0x037F, 0x037F},   {0x0386, 0x0386},   {0x0388, 0x038A},
    {0x038C, 0x038C},   {0x038E, 0x03A1},   {0x03A3, 0x03F5},   {0x03F7, 0x0481},   {0x048A, 0x052F},
    {0x0531, 0x0556},   {0x10A0, 0x10C5},   {0x13A0, 0x13F5},   {0x13F8, 0x13FD},   {0x1C90, 0x1CBA},
    {0x1CBD, 0x1CBF},   {0x1D00, 0x1D2B},   {0x1D6B, 0x1D77},   {0x1D79, 0x1D9A},   {0x1E00, 0x1F15},
    {0x1F18, 0x1F1D},   {0x1F20, 0x1F45},   {0x1F48, 0x1F4D},   {0x1F50, 0x1F57},   {0x1F59, 0x1F59},
    {0x1F5B, 0x1F5B},   {0x1F5D, 0x1F5D},   {0x1F5F, 0x1F7D},   {0x1F80, 0x1FB4},   {0x1FB6, 0x1FBC},
    {0x1FBE, 0x1FBE},   {0x1FC2, 0x1FC4},   {0x1FC6, 0x1FCC},   {0x1FD0, 0x1FD3},   {0x1FD6, 0x1FDB},
    {0x1FE0, 0x1FEC},   {0x1FF2, 0x1FF4},   {0x1FF6, 0x1FFC},   {0x2102, 0x2102},   {0x2107, 0x2107},
    {0x210A, 0x2113},   {0x2115, 0x2115},   {0x2119, 0x211D},   {0x2124, 0x2124},   {0x2126, 0x2126},
    {0x2128, 0x2128},   {0x212A, 0x212D},   {0x212F, 0x2134},   {0x2139, 0x2139},   {0x213C, 0x213F},
    {0x2145, 0x2149},   {0x214E, 0x214E},   {0x2183, 0x2184},   {0x2C00, 0x2C7B},   {0x2C7E, 0x2CE4},
    {0x2CEB, 0x2CEE},   {0x2CF2, 0x2CF3},   {0xA640, 0xA66D},   {0xA680, 0xA69B},   {0xA722, 0xA76F},
    {0xA771, 0xA787},   {0xA78B, 0xA78E},   {0xAB70, 0xABBF},   {0xFB00, 0xFB06},   {0xFB13, 0xFB17},
    {0xFF21, 0xFF3A},   {0xFF41, 0xFF5A},   {0x10400, 0x1044F}, {0x104B0, 0x104D3}, {0x104D8, 0x104FB},
    {0x10C80, 0x10CB2}, {0x10CC0, 0x10CF2}, {0x118A0, 0x118DF}, {0x1E900, 0x1E943},
};

// deepseek-llm's punctuation class: [!-/:-~！-／：-～‘-‟　-。], sorted.
constexpr uint32_t kDeepseekPunct[][2] = {
    {0x21, 0x2F}, {0x3A, 0x7E}, {0x2018, 0x201F}, {0x3000, 0x3002}, {0xFF01, 0xFF0F}, {0xFF1A, 0xFF5E},
};

// CJK class shared by the deepseek pre-tokenizers: [一-龥ࠀ-一가-퟿].
bool IsDeepseekCjk(uint32_t c) { return (c >= 0x0800 && c <= 0x9FA5) || (c >= 0xAC00 && c <= 0xD7FF); }

// Regexes without \p{..} run over the original code points, except that
// llama.cpp rewrites non-ASCII whitespace to U+000B first; class tests must
// see that rewritten value.
uint32_t Rewritten(uint32_t c) { return c > 0x7F && IsWhitespace(c) ? 0x0B : c; }

// GPT-2: 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)|\s+
// (llama.cpp's custom scanner: never a gap, one code point where nothing matches).
void SplitGpt2(const uint32_t* c, size_t n, Pieces* out) {
  auto L = [&](size_t p) { return p < n && Cp::L(c[p]); };
  auto N = [&](size_t p) { return p < n && Cp::N(c[p]); };
  auto Ws = [&](size_t p) { return p < n && Cp::Ws(c[p]); };
  auto Other = [&](size_t p) { return p < n && !Cp::Ws(c[p]) && !Cp::L(c[p]) && !Cp::N(c[p]); };
  size_t pos = 0;
  while (pos < n) {
    if (size_t k = pretok::ContractionAt(c, n, pos, /*any_case=*/false)) {
      out->push_back(k);
      pos += k;
      continue;
    }
    const size_t q = c[pos] == ' ' ? pos + 1 : pos;  // where the class run would start
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
    const size_t len = ws == 0 ? 1 : pretok::WhitespaceRun(pos, ws, n);
    out->push_back(len);
    pos += len;
  }
}

// \s+$ : the maximal run of whitespace that ends the piece.
void SplitTrailingSpace(const uint32_t* c, size_t n, Pieces* out) {
  size_t j = n;
  while (j > 0 && Cp::Ws(c[j - 1])) --j;
  if (j > 0) out->push_back(j);
  if (j < n) out->push_back(n - j);
}

bool InAny(uint32_t c, std::initializer_list<std::pair<uint32_t, uint32_t>> ranges) {
  for (const auto& [lo, hi] : ranges) {
    if (c >= lo && c <= hi) return true;
  }
  return false;
}

// deepseek-v3's [一-龥぀-ゟ゠-ヿ]: CJK ideographs to U+9FA5, hiragana, katakana.
bool IsDeepseekV3Cjk(uint32_t c) { return InAny(c, {{0x3040, 0x30FF}, {0x4E00, 0x9FA5}}); }

// afmoe's CJK and South-East Asian class, as llama.cpp lists its ranges.
bool IsAfmoeAsian(uint32_t c) {
  return InAny(c, {{0x0E40, 0x0EFF},
                   {0x1000, 0x109F},
                   {0x1100, 0x11FF},
                   {0x1780, 0x17FF},
                   {0x2F00, 0x2FDF},
                   {0x3040, 0x30FF},
                   {0x3400, 0x4DBF},
                   {0x4E00, 0x9FFF},
                   {0xA9E0, 0xA9FF},
                   {0xAA60, 0xAA7F},
                   {0xAC00, 0xD7AF},
                   {0xF900, 0xFAFF},
                   {0xFF65, 0xFF9F}});
}

// youtu's first regex:
// [가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥぀-ゟ゠-ヿ]+ (four disjoint
// classes: the match is the run of c[i]'s class).
int YoutuScript(uint32_t c) {
  if (InAny(c, {{0xAC00, 0xD7A3}, {0x3131, 0x318E}})) return 1;
  if (InAny(c, {{0xFF01, 0xFF01},
                {0x2026, 0x2026},
                {0x201C, 0x201D},
                {0x2018, 0x2019},
                {0x2014, 0x2014},
                {0xFF1A, 0xFF1B},
                {0xFF0C, 0xFF0C},
                {0x3001, 0x303F},
                {0xFE30, 0xFE4F}})) {
    return 2;
  }
  if (InAny(c, {{0x3105, 0x312F}})) return 3;
  if (IsDeepseekV3Cjk(c)) return 4;
  return 0;
}

size_t MatchYoutuScript(const uint32_t* c, size_t n, size_t i) {
  const int script = YoutuScript(c[i]);
  if (script == 0) return 0;
  size_t e = i + 1;
  while (e < n && YoutuScript(c[e]) == script) ++e;
  return e - i;
}

// laguna's first regex [^\n]+|[\n]+ : lines apart from runs of newlines.
size_t MatchLineOrNewlines(const uint32_t* c, size_t n, size_t i) {
  const bool nl = c[i] == '\n';
  size_t e = i + 1;
  while (e < n && (c[e] == '\n') == nl) ++e;
  return e - i;
}

// fn(start, end) for each maximal run [start, end) of code points `in_run`
// holds for, in order.
template <typename InRun, typename Fn>
void ForEachRun(const uint32_t* c, size_t n, InRun in_run, Fn fn) {
  size_t pos = 0;
  while (pos < n) {
    if (!in_run(c[pos])) {
      ++pos;
      continue;
    }
    const size_t start = pos;
    while (pos < n && in_run(c[pos])) ++pos;
    fn(start, pos);
  }
}

// afmoe's digit pass, as llama.cpp's custom scanner does it: each run of
// \p{N} is cut into a leading group of (length mod 3) and then groups of 3;
// the text before a run is not cut from the run's first group.
void SplitAfmoeDigits(const uint32_t* c, size_t n, Pieces* out) {
  size_t prev_end = 0;
  auto emit = [&](size_t end) {
    if (end > prev_end) out->push_back(end - prev_end);
    prev_end = end;
  };
  ForEachRun(c, n, Cp::N, [&](size_t start, size_t end) {
    size_t cut = start + (end - start) % 3;
    if (cut > start) emit(cut);
    for (; cut < end; cut += 3) emit(cut + 3);
  });
  emit(n);
}

// tiny_aya's \d{1,3}(?=(?:\d{3})*\b) (no \p{..}: plain ASCII \d and \w):
// an ASCII digit run that a word boundary ends is cut into a leading group
// of 1-3 and then groups of 3; other runs stay in the gaps.
void SplitTinyAyaDigits(const uint32_t* c, size_t n, Pieces* out) {
  auto word_char = [](uint32_t x) { return x == '_' || (x < 0x80 && (Cp::L(x) || Cp::N(x))); };
  size_t gap_start = 0;
  ForEachRun(c, n, Cp::AsciiDigit, [&](size_t start, size_t end) {
    if (end < n && word_char(c[end])) return;  // no \b after the run
    if (start > gap_start) out->push_back(start - gap_start);
    const size_t lead = (end - start) % 3 == 0 ? 3 : (end - start) % 3;
    out->push_back(lead);
    for (size_t cut = start + lead; cut < end; cut += 3) out->push_back(3);
    gap_start = end;
  });
  if (n > gap_start) out->push_back(n - gap_start);
}

// superbpe's (?=(\d{3})+(?!\d)): empty matches before every position from
// which a multiple of 3 ASCII digits runs to a non-digit; the piece is cut
// there (llama.cpp also emits the empty matches, which hold no text).
void SplitSuperBpeDigits(const uint32_t* c, size_t n, Pieces* out) {
  size_t piece_start = 0;
  ForEachRun(c, n, Cp::AsciiDigit, [&](size_t start, size_t end) {
    for (size_t cut = start + (end - start) % 3; cut + 3 <= end; cut += 3) {
      if (cut > piece_start) out->push_back(cut - piece_start);
      piece_start = cut;
    }
  });
  if (n > piece_start) out->push_back(n - piece_start);
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

// A pass that splits by a matcher (regex_iterator semantics).
template <typename Match>
auto By(Match match) {
  return [match](const uint32_t* c, size_t n, Pieces* out) { SplitByMatches(c, n, match, out); };
}

auto Words(pretok::WordRules r) {
  return [r](const uint32_t* c, size_t n, Pieces* out) { pretok::SplitWords(r, c, n, out); };
}

auto Cased(pretok::CasedRules r) {
  return By([r](const uint32_t* c, size_t n, size_t i) { return pretok::MatchCased(r, c, n, i); });
}

auto DeepseekV3Words(bool lone_newline) {
  return By([lone_newline](const uint32_t* c, size_t n, size_t i) {
    return pretok::MatchDeepseekV3Word(lone_newline, c, n, i);
  });
}

// The Llama 3 shaped kinds' rules.
pretok::WordRules WordRulesFor(PreTokenizerKind kind) {
  using K = PreTokenizerKind;
  pretok::WordRules r;  // Llama 3
  r.halving_spaces = kind == K::kJais2;
  r.contractions = kind != K::kUfakzeka;
  r.marks_are_letters = kind == K::kQwen35;
  r.crlf_tail = kind != K::kSeedCoder;
  if (kind == K::kQwen2 || kind == K::kQwen35 || kind == K::kSeedCoder || kind == K::kUfakzeka || kind == K::kLaguna) {
    r.max_digits = 1;  // \p{N}
  } else if (kind == K::kMiniCpm5) {
    r.max_digits = SIZE_MAX;  // \p{N}+
  }
  return r;
}

// The GPT-4o shaped kinds' rules.
pretok::CasedRules CasedRulesFor(PreTokenizerKind kind) {
  using K = PreTokenizerKind;
  pretok::CasedRules r;  // GPT-4o
  r.marks = kind == K::kGraniteEmbMulti;
  r.case_blind = kind == K::kYoutu || kind == K::kTinyAya;
  r.contractions = kind != K::kTekken;
  if (kind == K::kTekken || kind == K::kYoutu) r.max_digits = 1;
  return r;
}

// deepseek-llm / deepseek-coder regex lists.
template <typename Pass>
void SplitDeepseek(bool llm, Pass& pass) {
  pass(By(RunOf(Cp::CrLf, 1)));  // [\r\n]
  if (llm) {
    pass(By(pretok::SpaceThenRunOf(
        [](uint32_t x) { return InRanges(Rewritten(x), kDeepseekLetters, std::size(kDeepseekLetters)); })));
    pass(By(pretok::SpaceThenRunOf(
        [](uint32_t x) { return InRanges(Rewritten(x), kDeepseekPunct, std::size(kDeepseekPunct)); })));
    pass(SplitTrailingSpace);
    pass(By(RunOf([](uint32_t x) { return IsDeepseekCjk(Rewritten(x)); })));
    pass(By(RunOf(Cp::N)));
  } else {
    pass(By(pretok::SpaceThenRunOf(Cp::L)));
    pass(By(pretok::SpaceThenRunOf(Cp::P)));
    pass(By(RunOf([](uint32_t x) { return IsDeepseekCjk(Rewritten(x)); })));
    pass(By(RunOf(Cp::N, 1)));
  }
}

// llama.cpp's fallback list and falcon's:
// [\p{P}\$\+<=>\^~\|`]+ (falcon; the fallback has no backtick), the GPT-2
// regex, \p{N}+ (fallback only), [0-9][0-9][0-9].
template <typename Pass>
void SplitDefaultOrFalcon(bool falcon, Pass& pass) {
  pass(By(RunOf([falcon](uint32_t x) {
    switch (x) {
      case '$':
      case '+':
      case '<':
      case '=':
      case '>':
      case '^':
      case '~':
      case '|': return true;
      case '`': return falcon;
      default: return Cp::P(x);
    }
  })));
  pass(SplitGpt2);
  if (!falcon) pass(By(RunOf(Cp::N)));
  pass(By([](const uint32_t* c, size_t n, size_t i) -> size_t {
    auto d = [&](size_t p) { return p < n && Cp::AsciiDigit(c[p]); };
    return d(i) && d(i + 1) && d(i + 2) ? 3 : 0;
  }));
}

// chameleon: <sentinel:[0-9]+> ; (IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z ;
// ([\t\n]|    |  ) ; \p{N} ; [\p{P}!-/:-@\[-`{-~] ; the GPT-2 regex.
template <typename Pass>
void SplitChameleon(Pass& pass) {
  auto literal = [](const uint32_t* c, size_t n, size_t i, const char* text) {
    for (size_t k = 0; text[k] != 0; ++k) {
      if (i + k >= n || c[i + k] != static_cast<unsigned char>(text[k])) return false;
    }
    return true;
  };
  pass(By([literal](const uint32_t* c, size_t n, size_t i) -> size_t {
    if (!literal(c, n, i, "<sentinel:")) return 0;
    size_t e = i + 10;
    while (e < n && Cp::AsciiDigit(c[e])) ++e;
    return e > i + 10 && e < n && c[e] == '>' ? e + 1 - i : 0;
  }));
  pass(By([literal](const uint32_t* c, size_t n, size_t i) -> size_t {
    if (!literal(c, n, i, "IMGIMG")) return 0;
    size_t e = i + 6;
    while (e < n && e - (i + 6) < 4 && c[e] >= 'A' && c[e] <= 'I') ++e;
    return e > i + 6 && e < n && c[e] == 'Z' ? e + 1 - i : 0;
  }));
  pass(By([literal](const uint32_t* c, size_t n, size_t i) -> size_t {
    if (c[i] == '\t' || c[i] == '\n') return 1;
    if (literal(c, n, i, "    ")) return 4;
    return literal(c, n, i, "  ") ? 2 : 0;
  }));
  pass(By(RunOf(Cp::N, 1)));
  pass(By(RunOf(
      [](uint32_t x) {
        return Cp::P(x) || (x >= 0x21 && x <= 0x2F) || (x >= 0x3A && x <= 0x40) || (x >= 0x5B && x <= 0x60) ||
               (x >= 0x7B && x <= 0x7E);
      },
      1)));
  pass(SplitGpt2);
}

}  // namespace

std::vector<size_t> PreTokenize(PreTokenizerKind kind, const std::vector<uint32_t>& cpts) {
  using K = PreTokenizerKind;
  if (cpts.empty()) return {};
  Pieces pieces = {cpts.size()};
  auto pass = [&](auto split) { pieces = ApplyPass(cpts, pieces, split); };
  const auto digit = By(RunOf(Cp::N, 1));    // \p{N}
  const auto digits3 = By(RunOf(Cp::N, 3));  // \p{N}{1,3}
  switch (kind) {
    case K::kGpt2: pass(SplitGpt2); break;
    case K::kStarcoder:
      pass(digit);
      pass(SplitGpt2);
      break;
    case K::kLlama3:
    case K::kJais2:
    case K::kQwen2:
    case K::kQwen35:
    case K::kSeedCoder:
    case K::kUfakzeka:
    case K::kLaguna:
    case K::kMiniCpm5:
      if (kind == K::kLaguna) pass(By(MatchLineOrNewlines));
      if (kind == K::kMiniCpm5) pass(digits3);
      pass(Words(WordRulesFor(kind)));
      break;
    case K::kDeepseekLlm:
    case K::kDeepseekCoder: SplitDeepseek(kind == K::kDeepseekLlm, pass); break;
    case K::kDeepseekV3:
    case K::kSpark25:
      pass(digits3);
      pass(By(RunOf(IsDeepseekV3Cjk)));
      pass(DeepseekV3Words(kind == K::kSpark25));
      if (kind == K::kSpark25) pass(digit);
      break;
    case K::kAfmoe:
      pass(SplitAfmoeDigits);
      pass(By(RunOf(IsAfmoeAsian)));
      pass(DeepseekV3Words(false));
      break;
    case K::kGpt4o:
    case K::kGraniteEmbMulti:
    case K::kTekken:
    case K::kYoutu:
    case K::kTinyAya:
      if (kind == K::kYoutu) pass(By(MatchYoutuScript));
      if (kind == K::kTinyAya) pass(SplitTinyAyaDigits);
      pass(Cased(CasedRulesFor(kind)));
      break;
    case K::kKimiK2: pass(By(pretok::MatchKimiK2)); break;
    case K::kExaoneMoe: pass(By(pretok::MatchExaoneMoe)); break;
    case K::kPoro:
    case K::kViking:
      pass(By(pretok::MatchPoroWord));
      if (kind == K::kViking) pass(digit);
      break;
    case K::kSuperBpe:
      pass(By(RunOf(Cp::N)));
      pass(SplitSuperBpeDigits);
      break;
    case K::kChameleon: SplitChameleon(pass); break;
    case K::kFalcon:
    case K::kDefault: SplitDefaultOrFalcon(kind == K::kFalcon, pass); break;
  }
  return pieces;
}

}  // namespace pg
