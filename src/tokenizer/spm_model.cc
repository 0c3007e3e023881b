#include "tokenizer/spm_model.h"

#include <algorithm>
#include <queue>

#include "tokenizer/unicode.h"

namespace pg {

SpmModel::SpmModel(const std::vector<float>& scores, const TokenIndex& index, int32_t unk_id)
    : scores_(scores), index_(index), unk_id_(unk_id) {
  static const char kHex[] = "0123456789ABCDEF";
  for (int b = 0; b < 256; ++b) {
    const char name[6] = {'<', '0', 'x', kHex[b >> 4], kHex[b & 15], '>'};
    int32_t id = LookupToken(index_, std::string_view(name, 6));
    if (id < 0) {
      const char raw = static_cast<char>(b);
      id = LookupToken(index_, std::string_view(&raw, 1));
    }
    byte_token_[b] = id;
  }
}

void SpmModel::Encode(std::string_view text, std::vector<int32_t>* out) const {
  if (text.empty()) return;
  struct Symbol {
    int32_t prev;
    int32_t next;
    uint32_t off;  // byte offset in text
    uint32_t n;    // byte length; 0 once merged into the left neighbour
  };
  struct Candidate {
    float score;
    int32_t left;
    int32_t right;
    uint32_t size;  // bytes of left + right when pushed
  };
  // Highest score first, then leftmost.
  auto worse = [](const Candidate& a, const Candidate& b) {
    return a.score < b.score || (a.score == b.score && a.left > b.left);
  };
  std::vector<Symbol> sym;
  sym.reserve(text.size());
  for (size_t off = 0; off < text.size();) {
    const size_t len = std::min(Utf8SeqLen(static_cast<uint8_t>(text[off])), text.size() - off);
    const int32_t idx = static_cast<int32_t>(sym.size());
    sym.push_back(
        {idx - 1, off + len == text.size() ? -1 : idx + 1, static_cast<uint32_t>(off), static_cast<uint32_t>(len)});
    off += len;
  }
  std::priority_queue<Candidate, std::vector<Candidate>, decltype(worse)> heap(worse);
  auto try_add = [&](int32_t left, int32_t right) {
    if (left < 0 || right < 0) return;
    const uint32_t size = sym[left].n + sym[right].n;
    const int32_t id = LookupToken(index_, text.substr(sym[left].off, size));
    if (id < 0) return;
    heap.push({scores_[id], left, right, size});
  };
  for (int32_t i = 1; i < static_cast<int32_t>(sym.size()); ++i) try_add(i - 1, i);
  while (!heap.empty()) {
    const Candidate c = heap.top();
    heap.pop();
    Symbol& l = sym[c.left];
    Symbol& r = sym[c.right];
    // Symbols only grow, so an unchanged total size means both are unchanged.
    if (l.n == 0 || r.n == 0 || l.n + r.n != c.size) continue;
    l.n += r.n;
    r.n = 0;
    l.next = r.next;
    if (r.next >= 0) sym[r.next].prev = c.left;
    try_add(l.prev, c.left);
    try_add(c.left, l.next);
  }
  for (int32_t i = 0; i >= 0; i = sym[i].next) {
    const std::string_view piece = text.substr(sym[i].off, sym[i].n);
    const int32_t id = LookupToken(index_, piece);
    if (id >= 0) {
      out->push_back(id);
      continue;
    }
    // A character that is not a token: byte fallback.
    for (unsigned char b : piece) {
      const int32_t bt = byte_token_[b] >= 0 ? byte_token_[b] : unk_id_;
      if (bt >= 0) out->push_back(bt);
    }
  }
}

}  // namespace pg
