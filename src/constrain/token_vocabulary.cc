#include "constrain/token_vocabulary.h"

#include <algorithm>
#include <map>
#include <mutex>
#include <numeric>
#include <tuple>

#include "constrain/grammar_matcher.h"
#include "tokenizer/tokenizer.h"

namespace pg {
namespace {

uint64_t Fnv(uint64_t h, const void* data, size_t n) {
  const auto* p = static_cast<const uint8_t*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

}  // namespace

TokenVocabulary::TokenVocabulary(const Tokenizer& t) : n_vocab_(t.n_vocab()) {
  bytes_.resize(static_cast<size_t>(n_vocab_));
  in_trie_.assign(static_cast<size_t>(n_vocab_), 0);
  uint64_t h = 14695981039346656037ull;
  for (int32_t id = 0; id < n_vocab_; ++id) {
    const TokenType type = t.token_type(id);
    const std::string& text = t.TokenText(id);
    h = Fnv(h, &type, sizeof type);
    h = Fnv(h, text.data(), text.size() + 1);
    if (t.IsEog(id)) {
      eog_ids_.push_back(id);
      continue;
    }
    if (type == TokenType::kControl || type == TokenType::kUnknown || type == TokenType::kUnused) continue;
    bytes_[static_cast<size_t>(id)] = t.TokenToPiece(id);
    in_trie_[static_cast<size_t>(id)] = bytes_[static_cast<size_t>(id)].empty() ? 0 : 1;
  }
  fingerprint_ = h;
  std::vector<int32_t> all, non_body;
  body_mask_.assign((static_cast<size_t>(n_vocab_) + 63) / 64, 0);
  for (int32_t id = 0; id < n_vocab_; ++id) {
    if (!in_trie(id)) continue;
    all.push_back(id);
    if (GrammarMatcher::KeepsStringBody(bytes(id)))
      body_mask_[static_cast<size_t>(id) / 64] |= uint64_t{1} << (id % 64);
    else
      non_body.push_back(id);
  }
  trie_ = TokenTrie::Build(std::move(all), bytes_);
  non_body_trie_ = TokenTrie::Build(std::move(non_body), bytes_);
}

TokenTrie TokenTrie::Build(std::vector<int32_t> order, const std::vector<std::string>& bytes_) {
  TokenTrie t;
  std::vector<Node>& nodes_ = t.nodes;
  std::vector<Edge>& edges_ = t.edges;
  std::vector<int32_t>& token_ids_ = t.token_ids;
  std::sort(order.begin(), order.end(), [&bytes_](int32_t a, int32_t b) {
    return std::tie(bytes_[static_cast<size_t>(a)], a) < std::tie(bytes_[static_cast<size_t>(b)], b);
  });
  // Explicit stack of (node, range of `order`, depth): the ids in a range
  // share their first `depth` bytes; the sorted order puts those ending
  // there first.
  struct Work {
    uint32_t node;
    size_t lo, hi, depth;
  };
  nodes_.push_back({});
  std::vector<Work> stack = {{0, 0, order.size(), 0}};
  while (!stack.empty()) {
    const Work w = stack.back();
    stack.pop_back();
    size_t i = w.lo;
    Node& node = nodes_[w.node];
    node.first_token = static_cast<uint32_t>(token_ids_.size());
    while (i < w.hi && bytes_[static_cast<size_t>(order[i])].size() == w.depth) token_ids_.push_back(order[i++]);
    node.n_tokens = static_cast<uint32_t>(token_ids_.size()) - node.first_token;
    // One edge per distinct next byte; edges contiguous for this node.
    std::vector<std::pair<size_t, size_t>> groups;
    while (i < w.hi) {
      const char c = bytes_[static_cast<size_t>(order[i])][w.depth];
      size_t j = i;
      while (j < w.hi && bytes_[static_cast<size_t>(order[j])][w.depth] == c) ++j;
      groups.emplace_back(i, j);
      i = j;
    }
    nodes_[w.node].first_edge = static_cast<uint32_t>(edges_.size());
    nodes_[w.node].n_edges = static_cast<uint32_t>(groups.size());
    for (const auto& [lo, hi] : groups) {
      const auto child = static_cast<uint32_t>(nodes_.size());
      nodes_.push_back({});
      edges_.push_back({static_cast<uint8_t>(bytes_[static_cast<size_t>(order[lo])][w.depth]), child});
      stack.push_back({child, lo, hi, w.depth + 1});
    }
  }
  return t;
}

std::shared_ptr<const TokenVocabulary> TokenVocabulary::For(const Tokenizer& t) {
  struct Entry {
    int32_t n_vocab;
    std::string first, last;
    std::shared_ptr<const TokenVocabulary> vocab;
  };
  static std::mutex mu;
  static std::map<const Tokenizer*, Entry> by_address;
  const int32_t n = t.n_vocab();
  const std::string first = n > 0 ? t.TokenText(0) : "", last = n > 0 ? t.TokenText(n - 1) : "";
  {
    std::lock_guard<std::mutex> lk(mu);
    auto it = by_address.find(&t);
    if (it != by_address.end() && it->second.n_vocab == n && it->second.first == first && it->second.last == last)
      return it->second.vocab;
  }
  auto vocab = std::make_shared<const TokenVocabulary>(t);  // built outside the lock
  std::lock_guard<std::mutex> lk(mu);
  by_address[&t] = {n, first, last, vocab};
  return vocab;
}

}  // namespace pg
