#include "tokenizer/tokenizer.h"

#include <algorithm>
#include <cstring>

#include "base/check.h"
#include "tokenizer/tokenizer_impl.h"
#include "tokenizer/unicode.h"

namespace pg {
namespace {

bool IsAsciiSpace(char c) { return c == ' ' || (c >= '\t' && c <= '\r'); }

constexpr const char* kSpaceEscape = "\xE2\x96\x81";  // U+2581, SentencePiece's space

// <0xNN> -> NN, or -1.
int ParseByteToken(const std::string& text) {
  if (text.size() != 6 || text.compare(0, 3, "<0x") != 0 || text[5] != '>') return -1;
  auto hex = [](char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    return -1;
  };
  const int hi = hex(text[3]);
  const int lo = hex(text[4]);
  return hi < 0 || lo < 0 ? -1 : hi * 16 + lo;
}

}  // namespace

Tokenizer::Tokenizer() : impl_(std::make_unique<Impl>()) {}
Tokenizer::~Tokenizer() = default;

std::vector<int32_t> Tokenizer::Encode(std::string_view text, bool add_special, bool parse_special) const {
  if (impl_->hf) {
    std::vector<int32_t> out;
    if (add_special && add_bos_) out.push_back(bos_id_);
    impl_->hf->Encode(text, parse_special, &out);
    if (add_special && add_eos_) out.push_back(eos_id_);
    return out;
  }
  // Fragments: either a special token (token >= 0) or a span of raw text.
  struct Fragment {
    int32_t token;
    size_t off;
    size_t len;
  };
  std::vector<Fragment> frags;
  if (!text.empty()) frags.push_back({-1, 0, text.size()});
  std::vector<Fragment> next;
  for (int32_t sid : impl_->special_ids) {
    const TokenType ty = types_[sid];
    // Without parse_special only user-defined tokens are split out.
    if (!parse_special && (ty == TokenType::kControl || ty == TokenType::kUnknown)) continue;
    const std::string& st = tokens_[sid];
    next.clear();
    bool changed = false;
    for (const Fragment& f : frags) {
      if (f.token >= 0) {
        next.push_back(f);
        continue;
      }
      const std::string_view span = text.substr(f.off, f.len);
      size_t pos = 0;
      while (true) {
        const size_t hit = span.find(st, pos);
        if (hit == std::string_view::npos) break;
        size_t left_end = hit;
        if (strip_[sid] & kStripLeft) {
          while (left_end > pos && IsAsciiSpace(span[left_end - 1])) --left_end;
        }
        if (left_end > pos) next.push_back({-1, f.off + pos, left_end - pos});
        next.push_back({sid, 0, 0});
        pos = hit + st.size();
        if (strip_[sid] & kStripRight) {
          while (pos < span.size() && IsAsciiSpace(span[pos])) ++pos;
        }
        changed = true;
      }
      if (pos < f.len) next.push_back({-1, f.off + pos, f.len - pos});
    }
    if (changed) frags.swap(next);
  }

  std::vector<int32_t> out;
  out.reserve(text.size() / 3 + 4);
  if (add_special && add_bos_) out.push_back(bos_id_);
  bool prev_special = true;  // SPM: prefix a space at the start and after special tokens
  std::string buf;
  for (const Fragment& f : frags) {
    if (f.token >= 0) {
      out.push_back(f.token);
      prev_special = true;
      continue;
    }
    const std::string_view span = text.substr(f.off, f.len);
    if (impl_->spm) {
      buf.clear();
      if (add_space_prefix_ && prev_special) buf.push_back(' ');
      buf.append(span);
      ReplaceAll(&buf, " ", kSpaceEscape);
      impl_->spm->Encode(buf, &out);
    } else {
      impl_->bpe->Encode(span, &out);
    }
    prev_special = false;
  }
  if (add_special && add_eos_) out.push_back(eos_id_);
  return out;
}

const std::string& Tokenizer::TokenText(int32_t id) const {
  PG_CHECK(IsValid(id));
  return tokens_[id];
}

TokenType Tokenizer::token_type(int32_t id) const { return IsValid(id) ? types_[id] : TokenType::kUndefined; }

bool Tokenizer::IsEog(int32_t id) const { return IsValid(id) && eog_[id] != 0; }

std::optional<int32_t> Tokenizer::FindToken(std::string_view text) const {
  const int32_t id = LookupToken(impl_->index, text);
  if (id < 0) return std::nullopt;
  return id;
}

std::string Tokenizer::TokenToPiece(int32_t id, bool render_special) const {
  if (!IsValid(id)) return "";
  const std::string& text = tokens_[id];
  if (impl_->hf) {
    const TokenType ty = types_[id];
    if (ty == TokenType::kUnused || (ty == TokenType::kControl && !render_special)) return "";
    return impl_->hf->Decode({text}, /*streaming=*/true);
  }
  switch (types_[id]) {
    case TokenType::kControl:
    case TokenType::kUnknown: return render_special ? text : "";
    case TokenType::kUserDefined: return text;
    case TokenType::kByte: {
      const int b = ParseByteToken(text);
      if (b >= 0) return std::string(1, static_cast<char>(b));
      break;  // a byte token without the <0xNN> form: treat as normal
    }
    case TokenType::kNormal: break;
    case TokenType::kUnused:
    case TokenType::kUndefined: return "";
  }
  std::string out;
  if (impl_->spm) {
    out = text;
    ReplaceAll(&out, kSpaceEscape, " ");
    return out;
  }
  // Byte-level: each code point stands for one byte; code points outside
  // the byte map (not produced by the encoder) are kept as they are.
  out.reserve(text.size());
  for (uint32_t cp : DecodeUtf8(text)) {
    const int b = UnicodeToByte(cp);
    if (b >= 0) {
      out.push_back(static_cast<char>(b));
    } else {
      AppendUtf8(cp, &out);
    }
  }
  return out;
}

std::string Tokenizer::Decode(const std::vector<int32_t>& ids, bool render_special) const {
  if (impl_->hf) {  // Hugging Face's decode: the decoders over all the token texts at once
    std::vector<std::string> texts;
    for (int32_t id : ids) {
      if (!IsValid(id)) continue;
      const TokenType ty = types_[id];
      if (ty == TokenType::kUnused || (ty == TokenType::kControl && !render_special)) continue;
      texts.push_back(tokens_[id]);
    }
    return impl_->hf->Decode(std::move(texts), /*streaming=*/false);
  }
  std::string out;
  for (size_t i = 0; i < ids.size(); ++i) {
    std::string piece = TokenToPiece(ids[i], render_special);
    // llama.cpp's detokenize drops the space SPM prepended, on the first token only.
    if (i == 0 && add_space_prefix_ && !piece.empty() && piece[0] == ' ') piece.erase(0, 1);
    out += piece;
  }
  return out;
}

}  // namespace pg
