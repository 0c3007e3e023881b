#include "tokenizer/bpe_model.h"

#include <algorithm>
#include <queue>

#include "tokenizer/unicode.h"

namespace pg {

int32_t BpeModel::SymbolId(const std::string& text) {
  const int32_t id = LookupToken(index_, text);
  if (id >= 0) return id;
  auto [it, inserted] = extra_ids_.emplace(text, n_vocab_ + static_cast<int32_t>(extra_text_.size()));
  if (inserted) extra_text_.push_back(text);
  return it->second;
}

Result<std::unique_ptr<BpeModel>> BpeModel::Build(const std::vector<std::string>& tokens, const TokenIndex& index,
                                                  const std::vector<std::string>& merges, PreTokenizerKind pre,
                                                  bool ignore_merges) {
  std::vector<std::pair<std::string, std::string>> pairs;
  pairs.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const std::string& merge = merges[rank];
    // As llama.cpp: split at the first space after the first byte.
    const size_t sp = merge.find(' ', 1);
    if (sp == std::string::npos || sp + 1 >= merge.size()) {
      return InvalidArgument("tokenizer.ggml.merges[" + std::to_string(rank) + "] is not of the form 'left right'");
    }
    pairs.emplace_back(merge.substr(0, sp), merge.substr(sp + 1));
  }
  return BuildFromPairs(tokens, index, pairs, pre, ignore_merges);
}

Result<std::unique_ptr<BpeModel>> BpeModel::BuildFromPairs(
    const std::vector<std::string>& tokens, const TokenIndex& index,
    const std::vector<std::pair<std::string, std::string>>& merges, PreTokenizerKind pre, bool ignore_merges) {
  std::unique_ptr<BpeModel> m(new BpeModel(index));
  m->n_vocab_ = static_cast<int32_t>(tokens.size());
  m->pre_ = pre;
  m->ignore_merges_ = ignore_merges;
  static const char kHex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    m->byte_symbol_[b] = m->SymbolId(ByteToUnicode(static_cast<uint8_t>(b)));
    const char name[6] = {'<', '0', 'x', kHex[b >> 4], kHex[b & 15], '>'};
    m->byte_token_[b] = LookupToken(index, std::string_view(name, 6));
  }
  m->merges_.reserve(merges.size());
  for (size_t rank = 0; rank < merges.size(); ++rank) {
    const auto& [left, right] = merges[rank];
    const int32_t l = m->SymbolId(left);
    const int32_t r = m->SymbolId(right);
    const int32_t res = m->SymbolId(left + right);
    const uint64_t key = (static_cast<uint64_t>(static_cast<uint32_t>(l)) << 32) | static_cast<uint32_t>(r);
    m->merges_.emplace(key, Merge{static_cast<int32_t>(rank), res});  // first rank wins
  }
  return m;
}

void BpeModel::Encode(std::string_view text, std::vector<int32_t>* out) const {
  const std::vector<uint32_t> cpts = DecodeUtf8(text);
  const std::vector<size_t> words = PreTokenize(pre_, cpts);
  std::string word;  // UTF-8 of one word (invalid input bytes became U+FFFD)
  size_t start = 0;
  for (size_t len : words) {
    word.clear();
    for (size_t i = start; i < start + len; ++i) AppendUtf8(cpts[i], &word);
    start += len;
    EncodeByteWord(word, out);
  }
}

void BpeModel::EncodeByteWord(std::string_view word, std::vector<int32_t>* out) const {
  if (ignore_merges_) {
    std::string encoded;
    for (unsigned char b : word) encoded += ByteToUnicode(b);
    const int32_t id = LookupToken(index_, encoded);
    if (id >= 0) {
      out->push_back(id);
      return;
    }
  }
  EncodeWord(reinterpret_cast<const uint8_t*>(word.data()), word.size(), out);
}

void BpeModel::EncodeCharWord(std::string_view word, bool byte_fallback, int32_t unk_id, bool fuse_unk,
                              std::vector<int32_t>* out) const {
  if (word.empty()) return;
  if (ignore_merges_) {
    const int32_t id = LookupToken(index_, word);
    if (id >= 0) {
      out->push_back(id);
      return;
    }
  }
  bool all_bytes = byte_fallback;
  for (int b = 0; b < 256 && all_bytes; ++b) all_bytes = byte_token_[b] >= 0;
  std::vector<int32_t> ids;
  bool pending_unk = false;
  for (size_t off = 0; off < word.size();) {
    const size_t len = std::min(Utf8SeqLen(static_cast<uint8_t>(word[off])), word.size() - off);
    const std::string_view ch = word.substr(off, len);
    off += len;
    const int32_t id = LookupToken(index_, ch);
    if (id >= 0) {
      if (pending_unk) ids.push_back(unk_id);
      pending_unk = false;
      ids.push_back(id);
    } else if (all_bytes) {
      for (unsigned char b : ch) ids.push_back(byte_token_[b]);
    } else if (unk_id >= 0) {
      if (pending_unk && !fuse_unk) ids.push_back(unk_id);
      pending_unk = true;
    }
  }
  if (pending_unk) ids.push_back(unk_id);
  MergeSymbols(&ids);
  EmitSymbols(ids, out);
}

void BpeModel::EncodeWord(const uint8_t* bytes, size_t n, std::vector<int32_t>* out) const {
  if (n == 0) return;
  std::vector<int32_t> ids(n);
  for (size_t i = 0; i < n; ++i) ids[i] = byte_symbol_[bytes[i]];
  MergeSymbols(&ids);
  EmitSymbols(ids, out);
}

void BpeModel::MergeSymbols(std::vector<int32_t>* ids) const {
  const size_t n = ids->size();
  if (n < 2) return;
  struct Symbol {
    int32_t id;
    int32_t prev;  // -1 at the start
    int32_t next;  // -1 at the end
    bool alive;
  };
  struct Candidate {
    int32_t rank;
    int32_t left;  // symbol index; right is symbols[left].next when pushed
    int32_t right;
    int32_t left_id;
    int32_t right_id;
    int32_t result;
  };
  // Lowest rank first, then leftmost.
  auto worse = [](const Candidate& a, const Candidate& b) {
    return a.rank > b.rank || (a.rank == b.rank && a.left > b.left);
  };
  std::vector<Symbol> sym(n);
  for (size_t i = 0; i < n; ++i) {
    sym[i] = {(*ids)[i], static_cast<int32_t>(i) - 1, i + 1 < n ? static_cast<int32_t>(i + 1) : -1, true};
  }
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(worse)> heap(worse);
  auto try_add = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const uint64_t key =
        (static_cast<uint64_t>(static_cast<uint32_t>(sym[left].id)) << 32) | static_cast<uint32_t>(sym[right].id);
    auto it = merges_.find(key);
    if (it == merges_.end()) return;
    heap.push({it->second.rank, left, right, sym[left].id, sym[right].id, it->second.result});
  };
  for (size_t i = 0; i + 1 < n; ++i) try_add(static_cast<int32_t>(i), static_cast<int32_t>(i + 1));
  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    Symbol& l = sym[c.left];
    Symbol& r = sym[c.right];
    // Stale if either side has merged since the candidate was pushed.
    if (!l.alive || !r.alive || l.next != c.right || l.id != c.left_id || r.id != c.right_id) continue;
    l.id = c.result;
    l.next = r.next;
    if (r.next >= 0) sym[r.next].prev = c.left;
    r.alive = false;
    try_add(l.prev, c.left);
    try_add(c.left, l.next);
  }
  ids->clear();
  for (int32_t i = 0; i >= 0; i = sym[i].next) ids->push_back(sym[i].id);
}

void BpeModel::EmitSymbols(const std::vector<int32_t>& ids, std::vector<int32_t>* out) const {
  for (int32_t id : ids) {
    if (id < n_vocab_) {
      out->push_back(id);
      continue;
    }
    // Not a token: llama.cpp falls back to looking up each byte of the
    // symbol's text on its own, dropping those that are not tokens.
    for (char ch : extra_text_[id - n_vocab_]) {
      const int32_t b = LookupToken(index_, std::string_view(&ch, 1));
      if (b >= 0) out->push_back(b);
    }
  }
}

}  // namespace pg
