// HfPipeline's encoding half: invalid UTF-8 replacement, added-token
// splitting, normalizers and pre-tokenizers, as Hugging Face tokenizers runs them.
#include <utf8proc.h>

#include <algorithm>
#include <cstdlib>
#include <optional>

#include "base/utf8.h"
#include "tokenizer/hf_pipeline.h"
#include "tokenizer/unicode.h"

namespace pg {
namespace {

constexpr const char* kReplacementChar = "\xEF\xBF\xBD";  // U+FFFD

// Length of the longest prefix of s[i..] that is (the start of) a well-formed
// UTF-8 sequence, and whether it is complete.
size_t WellFormedPrefix(std::string_view s, size_t i, bool* complete) {
  const std::optional<Utf8Lead> lead = Utf8LeadOf(static_cast<unsigned char>(s[i]));
  if (!lead || lead->continuation == 0) {
    *complete = false;
    return 1;
  }
  const size_t need = static_cast<size_t>(lead->continuation);
  size_t k = 1;
  for (; k <= need && i + k < s.size(); ++k) {
    const auto c = static_cast<unsigned char>(s[i + k]);
    if (k == 1 ? (c < lead->lo || c > lead->hi) : (c < 0x80 || c > 0xBF)) break;
  }
  *complete = k == need + 1;
  return k;
}

// Rust's \w at one code point (regex crate, Unicode): letters, marks, digits, connector punctuation.
bool IsWordChar(uint32_t cp) {
  const UnicodeCategory c = CategoryOf(cp);
  return c == UnicodeCategory::kLetter || c == UnicodeCategory::kMark || c == UnicodeCategory::kNumber || cp == '_';
}

// The code point that ends s / starts s (valid UTF-8), or -1 when empty.
int64_t LastCp(std::string_view s) {
  if (s.empty()) return -1;
  size_t i = s.size() - 1;
  while (i > 0 && (static_cast<unsigned char>(s[i]) & 0xC0) == 0x80) --i;
  return DecodeUtf8(s.substr(i))[0];
}
int64_t FirstCp(std::string_view s) {
  if (s.empty()) return -1;
  return DecodeUtf8(s.substr(0, std::min(s.size(), Utf8SeqLen(static_cast<uint8_t>(s[0])))))[0];
}

std::string Utf8procMap(const std::string& text, int options) {
  utf8proc_uint8_t* dst = nullptr;
  const utf8proc_ssize_t n =
      utf8proc_map(reinterpret_cast<const utf8proc_uint8_t*>(text.data()), static_cast<utf8proc_ssize_t>(text.size()),
                   &dst, static_cast<utf8proc_option_t>(options | UTF8PROC_STABLE));
  if (n < 0) return text;  // only on invalid UTF-8, which Encode has already replaced
  std::string out(reinterpret_cast<const char*>(dst), static_cast<size_t>(n));
  std::free(dst);
  return out;
}

struct Segment {
  size_t begin, end;
  bool is_match;
};

// Hugging Face's split of one piece by its matches, with the behaviour's merging.
std::vector<std::pair<size_t, size_t>> ApplyBehavior(std::vector<Segment> segs, HfPreTokenizer::Behavior behavior,
                                                     bool invert) {
  using B = HfPreTokenizer::Behavior;
  if (invert) {
    for (Segment& s : segs) s.is_match = !s.is_match;
  }
  std::vector<std::pair<size_t, size_t>> out;
  switch (behavior) {
    case B::kIsolated:
      for (const Segment& s : segs) out.emplace_back(s.begin, s.end);
      break;
    case B::kRemoved:
      for (const Segment& s : segs) {
        if (!s.is_match) out.emplace_back(s.begin, s.end);
      }
      break;
    case B::kMergedWithPrevious:
    case B::kContiguous: {
      const bool contiguous = behavior == B::kContiguous;
      for (size_t i = 0; i < segs.size(); ++i) {
        const bool merge = contiguous ? i > 0 && segs[i].is_match == segs[i - 1].is_match
                                      : i > 0 && segs[i].is_match && !segs[i - 1].is_match;
        if (merge && !out.empty()) {
          out.back().second = segs[i].end;
        } else {
          out.emplace_back(segs[i].begin, segs[i].end);
        }
      }
      break;
    }
    case B::kMergedWithNext:
      for (size_t k = segs.size(); k-- > 0;) {
        const bool merge = k + 1 < segs.size() && segs[k].is_match && !segs[k + 1].is_match;
        if (merge && !out.empty()) {
          out.back().first = segs[k].begin;
        } else {
          out.emplace_back(segs[k].begin, segs[k].end);
        }
      }
      std::reverse(out.begin(), out.end());
      break;
  }
  return out;
}

// Matches of a Split step (or of ByteLevel's GPT-2 regex) in text, with the gaps.
std::vector<Segment> FindSegments(const std::string& text, const HfRegex* regex, std::string_view literal) {
  std::vector<std::pair<size_t, size_t>> matches;
  if (regex != nullptr) {
    matches = regex->FindAll(text);
  } else if (!literal.empty()) {
    for (size_t hit, pos = 0; (hit = text.find(literal, pos)) != std::string::npos; pos = hit + literal.size()) {
      matches.emplace_back(hit, hit + literal.size());
    }
  }
  std::vector<Segment> segs;
  size_t prev = 0;
  for (const auto& [b, e] : matches) {
    if (b > prev) segs.push_back({prev, b, false});
    segs.push_back({b, e, true});
    prev = e;
  }
  if (prev < text.size()) segs.push_back({prev, text.size(), false});
  return segs;
}

}  // namespace

std::string ToValidUtf8(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  size_t i = 0;
  while (i < text.size()) {
    if (static_cast<unsigned char>(text[i]) < 0x80) {
      out.push_back(text[i++]);
      continue;
    }
    bool complete = false;
    const size_t k = WellFormedPrefix(text, i, &complete);
    if (complete) {
      out.append(text.substr(i, k));
    } else {
      out += kReplacementChar;
    }
    i += k;
  }
  return out;
}

void HfPipeline::Finish() {
  std::stable_sort(added.begin(), added.end(),
                   [](const HfAddedToken& a, const HfAddedToken& b) { return a.match.size() > b.match.size(); });
  for (auto& v : by_first_byte_) v.clear();
  for (size_t i = 0; i < added.size(); ++i) {
    if (added[i].match.empty()) continue;
    by_first_byte_[static_cast<unsigned char>(added[i].match[0])].push_back(static_cast<int32_t>(i));
  }
}

std::string HfPipeline::Normalize(std::string text) const {
  for (const HfNormalizer& n : normalizers) {
    switch (n.kind) {
      case HfNormalizer::Kind::kNfc: text = Utf8procMap(text, UTF8PROC_COMPOSE); break;
      case HfNormalizer::Kind::kNfd: text = Utf8procMap(text, UTF8PROC_DECOMPOSE); break;
      case HfNormalizer::Kind::kNfkc: text = Utf8procMap(text, UTF8PROC_COMPOSE | UTF8PROC_COMPAT); break;
      case HfNormalizer::Kind::kNfkd: text = Utf8procMap(text, UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT); break;
      case HfNormalizer::Kind::kPrepend:
        if (!text.empty()) text = n.content + text;
        break;
      case HfNormalizer::Kind::kReplace:
        if (n.regex == nullptr) {
          ReplaceAll(&text, n.pattern, n.content);
        } else {
          std::string out;
          size_t prev = 0;
          for (const auto& [b, e] : n.regex->FindAll(text)) {
            out.append(text, prev, b - prev);
            out += n.content;
            prev = e;
          }
          out.append(text, prev, std::string::npos);
          text = std::move(out);
        }
        break;
    }
  }
  return text;
}

// Splits text around the added tokens of one pass (raw text: tokens not
// `normalized`; normalized text: the others), as Hugging Face's
// AddedVocabulary: the leftmost match, longest at that position; a skipped
// match (special without parse_special, single_word inside a word) leaves its
// text to the model and the search goes on after it.
void HfPipeline::SplitAdded(std::string_view text, bool normalized_pass, bool parse_special, bool at_start,
                            std::vector<Piece>* out) const {
  size_t start_offset = 0;  // end of the last piece pushed
  size_t i = 0;
  while (i < text.size()) {
    const HfAddedToken* hit = nullptr;
    for (int32_t k : by_first_byte_[static_cast<unsigned char>(text[i])]) {
      const HfAddedToken& t = added[k];
      if (t.normalized != normalized_pass) continue;
      if (text.compare(i, t.match.size(), t.match) == 0) {
        hit = &t;
        break;
      }
    }
    if (hit == nullptr) {
      ++i;
      continue;
    }
    size_t start = i, stop = i + hit->match.size();
    i = stop;
    if (hit->special && !parse_special) continue;
    if (hit->single_word) {
      const int64_t before = LastCp(text.substr(0, start));
      const int64_t after = FirstCp(text.substr(stop));
      if ((before >= 0 && IsWordChar(static_cast<uint32_t>(before))) ||
          (after >= 0 && IsWordChar(static_cast<uint32_t>(after)))) {
        continue;
      }
    }
    if (hit->lstrip) {  // take the whitespace before the token, back to the last piece
      while (start > start_offset) {
        size_t j = start - 1;
        while (j > start_offset && (static_cast<unsigned char>(text[j]) & 0xC0) == 0x80) --j;
        if (!IsWhitespace(static_cast<uint32_t>(FirstCp(text.substr(j, start - j))))) break;
        start = j;
      }
    }
    if (hit->rstrip) {
      while (stop < text.size()) {
        const int64_t cp = FirstCp(text.substr(stop));
        if (!IsWhitespace(static_cast<uint32_t>(cp))) break;
        stop += Utf8SeqLen(static_cast<uint8_t>(text[stop]));
      }
      i = stop;
    }
    if (start > start_offset)
      out->push_back({text.substr(start_offset, start - start_offset), -1, at_start && start_offset == 0});
    out->push_back({text.substr(start, stop - start), hit->id, false});
    start_offset = stop;
  }
  if (start_offset < text.size()) {
    out->push_back({text.substr(start_offset), -1, at_start && start_offset == 0});
  }
}

void HfPipeline::PreTokenize(std::string text, bool at_start, std::vector<std::string>* words) const {
  std::vector<std::string> pieces;
  pieces.push_back(std::move(text));
  std::vector<std::string> next;
  for (const HfPreTokenizer& p : pre_tokenizers) {
    next.clear();
    for (size_t pi = 0; pi < pieces.size(); ++pi) {
      std::string piece = std::move(pieces[pi]);
      const HfRegex* regex = p.regex.get();
      std::string_view literal = p.literal;
      HfPreTokenizer::Behavior behavior = p.behavior;
      bool invert = p.invert;
      if (p.kind == HfPreTokenizer::Kind::kByteLevel) {
        if (p.add_prefix_space && (piece.empty() || piece[0] != ' ')) piece.insert(0, " ");
        regex = p.gpt2_regex.get();
        behavior = HfPreTokenizer::Behavior::kIsolated;
        invert = false;
        if (regex == nullptr) {
          next.push_back(std::move(piece));
          continue;
        }
      } else if (p.kind == HfPreTokenizer::Kind::kMetaspace) {
        ReplaceAll(&piece, " ", p.replacement);
        const bool first = at_start && pi == 0;
        const bool prepend =
            p.prepend == HfPreTokenizer::Prepend::kAlways || (p.prepend == HfPreTokenizer::Prepend::kFirst && first);
        if (prepend && piece.compare(0, p.replacement.size(), p.replacement) != 0) piece.insert(0, p.replacement);
        if (!p.split) {
          next.push_back(std::move(piece));
          continue;
        }
        regex = nullptr;
        literal = p.replacement;
        behavior = HfPreTokenizer::Behavior::kMergedWithNext;
        invert = false;
      }
      for (const auto& [b, e] : ApplyBehavior(FindSegments(piece, regex, literal), behavior, invert)) {
        if (e > b) next.push_back(piece.substr(b, e - b));
      }
    }
    pieces.swap(next);
  }
  for (std::string& w : pieces) words->push_back(std::move(w));
}

void HfPipeline::Encode(std::string_view text, bool parse_special, std::vector<int32_t>* out) const {
  const std::string valid = ToValidUtf8(text);
  std::vector<Piece> raw, norm_pieces;
  SplitAdded(valid, /*normalized_pass=*/false, parse_special, /*at_start=*/true, &raw);
  std::vector<std::string> words;
  for (const Piece& r : raw) {
    if (r.token >= 0) {
      out->push_back(r.token);
      continue;
    }
    const std::string normalized = Normalize(std::string(r.text));
    norm_pieces.clear();
    SplitAdded(normalized, /*normalized_pass=*/true, parse_special, r.at_start, &norm_pieces);
    for (const Piece& n : norm_pieces) {
      if (n.token >= 0) {
        out->push_back(n.token);
        continue;
      }
      words.clear();
      PreTokenize(std::string(n.text), n.at_start, &words);
      for (const std::string& w : words) {
        if (byte_level) {
          bpe->EncodeByteWord(w, out);
        } else {
          bpe->EncodeCharWord(w, byte_fallback, unk_id, fuse_unk, out);
        }
      }
    }
  }
}

}  // namespace pg
