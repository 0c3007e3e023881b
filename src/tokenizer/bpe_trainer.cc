// TrainByteLevelBpe: classic BPE training over pre-tokenized words.
//
// The corpus is split with the qwen2 pre-tokenizer, identical words are
// counted once with their multiplicity, and each word is a sequence of
// symbol ids (0..255 are the bytes). Pair counts live in a hash map and a
// max-heap with lazy invalidation; each merge only revisits the words that
// contain the merged pair (an inverted index), so training costs roughly
// O(total occurrences touched) rather than O(merges x corpus).
#include <algorithm>
#include <queue>
#include <unordered_map>
#include <unordered_set>

#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace pg {
namespace {

uint64_t PairKey(int32_t a, int32_t b) {
  return (static_cast<uint64_t>(static_cast<uint32_t>(a)) << 32) | static_cast<uint32_t>(b);
}

struct HeapEntry {
  int64_t count;
  uint64_t key;
};

// Most frequent first; ties go to the smaller pair key so training is
// deterministic.
struct HeapLess {
  bool operator()(const HeapEntry& x, const HeapEntry& y) const {
    return x.count < y.count || (x.count == y.count && x.key > y.key);
  }
};

}  // namespace

Result<BpeTrainResult> TrainByteLevelBpe(std::string_view corpus, int vocab_size,
                                         const std::vector<std::string>& special_tokens) {
  const int64_t n_special = static_cast<int64_t>(special_tokens.size());
  if (vocab_size < 256 + n_special) {
    return InvalidArgument("vocab_size " + std::to_string(vocab_size) + " is smaller than 256 bytes + " +
                           std::to_string(n_special) + " special tokens");
  }
  const size_t target = static_cast<size_t>(vocab_size - n_special);

  // Unique words with counts.
  std::vector<std::vector<int32_t>> words;
  std::vector<int64_t> counts;
  {
    const std::vector<uint32_t> cpts = DecodeUtf8(corpus);
    const std::vector<size_t> pieces = PreTokenize(PreTokenizerKind::kQwen2, cpts);
    std::unordered_map<std::string, int32_t> word_index;
    std::string w;
    size_t start = 0;
    for (size_t len : pieces) {
      w.clear();
      for (size_t i = start; i < start + len; ++i) AppendUtf8(cpts[i], &w);
      start += len;
      auto [it, inserted] = word_index.emplace(w, static_cast<int32_t>(words.size()));
      if (inserted) {
        words.emplace_back(w.begin(), w.end());
        for (int32_t& s : words.back()) s = static_cast<uint8_t>(s);
        counts.push_back(0);
      }
      counts[it->second] += 1;
    }
  }

  BpeTrainResult res;
  std::unordered_map<std::string, int32_t> token_ids;
  for (int b = 0; b < 256; ++b) {
    res.tokens.push_back(ByteToUnicode(static_cast<uint8_t>(b)));
    token_ids.emplace(res.tokens.back(), b);
  }

  std::unordered_map<uint64_t, int64_t> pair_count;
  std::unordered_map<uint64_t, std::vector<int32_t>> pair_words;  // may repeat a word
  for (size_t w = 0; w < words.size(); ++w) {
    const auto& s = words[w];
    for (size_t i = 0; i + 1 < s.size(); ++i) {
      const uint64_t k = PairKey(s[i], s[i + 1]);
      pair_count[k] += counts[w];
      pair_words[k].push_back(static_cast<int32_t>(w));
    }
  }
  std::priority_queue<HeapEntry, std::vector<HeapEntry>, HeapLess> heap;
  for (const auto& [k, c] : pair_count) heap.push({c, k});

  std::vector<uint32_t> visited(words.size(), 0);  // merge number that last touched each word
  std::unordered_map<uint64_t, int64_t> delta;     // per merge: count change of each pair
  uint32_t merge_no = 0;
  while (res.tokens.size() < target && !heap.empty()) {
    const HeapEntry top = heap.top();
    heap.pop();
    auto pc = pair_count.find(top.key);
    const int64_t cur = pc == pair_count.end() ? 0 : pc->second;
    if (cur != top.count) {
      // Stale entry. Increases were pushed when they happened; a decrease
      // needs its current count re-queued.
      if (cur > 0 && cur < top.count) heap.push({cur, top.key});
      continue;
    }
    if (cur < 2) break;  // nothing repeats any more

    ++merge_no;
    const int32_t a = static_cast<int32_t>(top.key >> 32);
    const int32_t b = static_cast<int32_t>(top.key & 0xFFFFFFFFu);
    const std::string merged = res.tokens[a] + res.tokens[b];
    res.merges.push_back(res.tokens[a] + " " + res.tokens[b]);
    int32_t new_id;
    auto found = token_ids.find(merged);
    if (found != token_ids.end()) {
      new_id = found->second;  // same text reached by another pair: reuse it
    } else {
      new_id = static_cast<int32_t>(res.tokens.size());
      res.tokens.push_back(merged);
      token_ids.emplace(merged, new_id);
    }

    delta.clear();
    std::vector<int32_t> affected = std::move(pair_words[top.key]);
    pair_words.erase(top.key);
    for (int32_t w : affected) {
      if (visited[w] == merge_no) continue;
      visited[w] = merge_no;
      auto& s = words[w];
      const int64_t c = counts[w];
      for (size_t i = 0; i + 1 < s.size(); ++i) delta[PairKey(s[i], s[i + 1])] -= c;
      size_t o = 0;
      for (size_t i = 0; i < s.size();) {
        if (i + 1 < s.size() && s[i] == a && s[i + 1] == b) {
          s[o++] = new_id;
          i += 2;
        } else {
          s[o++] = s[i++];
        }
      }
      s.resize(o);
      for (size_t i = 0; i + 1 < s.size(); ++i) {
        const uint64_t k = PairKey(s[i], s[i + 1]);
        delta[k] += c;
        if (s[i] == new_id || s[i + 1] == new_id) pair_words[k].push_back(w);
      }
    }
    for (const auto& [k, d] : delta) {
      if (d == 0) continue;
      int64_t& pcount = pair_count[k];
      pcount += d;
      if (d > 0) heap.push({pcount, k});
      if (pcount <= 0) pair_count.erase(k);
    }
  }

  res.token_types.assign(res.tokens.size(), static_cast<int32_t>(TokenType::kNormal));
  for (const std::string& sp : special_tokens) {
    if (sp.empty()) return InvalidArgument("empty special token");
    if (!token_ids.emplace(sp, static_cast<int32_t>(res.tokens.size())).second) {
      return InvalidArgument("special token '" + sp + "' duplicates another token");
    }
    res.tokens.push_back(sp);
    res.token_types.push_back(static_cast<int32_t>(TokenType::kControl));
  }
  return res;
}

}  // namespace pg
