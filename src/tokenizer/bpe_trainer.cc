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

// Unique words of the corpus, each a sequence of symbol ids (bytes at
// first), with how often each occurs.
struct WordCounts {
  std::vector<std::vector<int32_t>> words;
  std::vector<int64_t> counts;  // by word
};

WordCounts CountWords(std::string_view corpus) {
  WordCounts wc;
  const std::vector<uint32_t> cpts = DecodeUtf8(corpus);
  const std::vector<size_t> pieces = PreTokenize(PreTokenizerKind::kQwen2, cpts);
  std::unordered_map<std::string, int32_t> word_index;
  std::string w;
  size_t start = 0;
  for (size_t len : pieces) {
    w.clear();
    for (size_t i = start; i < start + len; ++i) AppendUtf8(cpts[i], &w);
    start += len;
    auto [it, inserted] = word_index.emplace(w, static_cast<int32_t>(wc.words.size()));
    if (inserted) {
      wc.words.emplace_back(w.begin(), w.end());
      for (int32_t& s : wc.words.back()) s = static_cast<uint8_t>(s);
      wc.counts.push_back(0);
    }
    wc.counts[it->second] += 1;
  }
  return wc;
}

// Counts of adjacent symbol pairs over the words, kept current as merges
// rewrite the words.
class PairTable {
 public:
  explicit PairTable(WordCounts& wc) : wc_(wc), visited_(wc.words.size(), 0) {
    for (size_t w = 0; w < wc_.words.size(); ++w) {
      const auto& s = wc_.words[w];
      for (size_t i = 0; i + 1 < s.size(); ++i) {
        const uint64_t k = PairKey(s[i], s[i + 1]);
        pair_count_[k] += wc_.counts[w];
        pair_words_[k].push_back(static_cast<int32_t>(w));
      }
    }
    for (const auto& [k, c] : pair_count_) heap_.push({c, k});
  }

  // Pops the most frequent pair; false once no pair repeats (or none is left).
  bool PopBest(uint64_t* key) {
    while (!heap_.empty()) {
      const HeapEntry top = heap_.top();
      heap_.pop();
      auto pc = pair_count_.find(top.key);
      const int64_t cur = pc == pair_count_.end() ? 0 : pc->second;
      if (cur != top.count) {
        // Stale entry. Increases were pushed when they happened; a decrease
        // needs its current count re-queued.
        if (cur > 0 && cur < top.count) heap_.push({cur, top.key});
        continue;
      }
      if (cur < 2) return false;  // nothing repeats any more
      *key = top.key;
      return true;
    }
    return false;
  }

  // Replaces pair key = (a, b) with new_id in every word that holds it.
  void Merge(uint64_t key, int32_t new_id) {
    ++merge_no_;
    delta_.clear();
    std::vector<int32_t> affected = std::move(pair_words_[key]);
    pair_words_.erase(key);
    for (int32_t w : affected) {
      if (visited_[w] == merge_no_) continue;
      visited_[w] = merge_no_;
      RewriteWord(w, static_cast<int32_t>(key >> 32), static_cast<int32_t>(key & 0xFFFFFFFFu), new_id);
    }
    ApplyDelta();
  }

 private:
  void RewriteWord(int32_t w, int32_t a, int32_t b, int32_t new_id) {
    auto& s = wc_.words[w];
    const int64_t c = wc_.counts[w];
    for (size_t i = 0; i + 1 < s.size(); ++i) delta_[PairKey(s[i], s[i + 1])] -= c;
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
      delta_[k] += c;
      if (s[i] == new_id || s[i + 1] == new_id) pair_words_[k].push_back(w);
    }
  }

  void ApplyDelta() {
    for (const auto& [k, d] : delta_) {
      if (d == 0) continue;
      int64_t& pcount = pair_count_[k];
      pcount += d;
      if (d > 0) heap_.push({pcount, k});
      if (pcount <= 0) pair_count_.erase(k);
    }
  }

  WordCounts& wc_;
  std::unordered_map<uint64_t, int64_t> pair_count_;
  std::unordered_map<uint64_t, std::vector<int32_t>> pair_words_;  // may repeat a word
  std::priority_queue<HeapEntry, std::vector<HeapEntry>, HeapLess> heap_;
  std::vector<uint32_t> visited_;                // merge number that last touched each word
  std::unordered_map<uint64_t, int64_t> delta_;  // per merge: count change of each pair
  uint32_t merge_no_ = 0;
};

// Records the merge of (a, b) and returns the id of the merged text: a new
// token, or the existing one when another pair already reached that text.
int32_t AddMerge(int32_t a, int32_t b, BpeTrainResult& res, std::unordered_map<std::string, int32_t>& token_ids) {
  const std::string merged = res.tokens[a] + res.tokens[b];
  res.merges.push_back(res.tokens[a] + " " + res.tokens[b]);
  auto found = token_ids.find(merged);
  if (found != token_ids.end()) return found->second;  // same text reached by another pair: reuse it
  const int32_t new_id = static_cast<int32_t>(res.tokens.size());
  res.tokens.push_back(merged);
  token_ids.emplace(merged, new_id);
  return new_id;
}

Status AppendSpecialTokens(const std::vector<std::string>& special_tokens, BpeTrainResult& res,
                           std::unordered_map<std::string, int32_t>& token_ids) {
  for (const std::string& sp : special_tokens) {
    if (sp.empty()) return InvalidArgument("empty special token");
    if (!token_ids.emplace(sp, static_cast<int32_t>(res.tokens.size())).second) {
      return InvalidArgument("special token '" + sp + "' duplicates another token");
    }
    res.tokens.push_back(sp);
    res.token_types.push_back(static_cast<int32_t>(TokenType::kControl));
  }
  return Status::Ok();
}

}  // namespace

Result<BpeTrainResult> TrainByteLevelBpe(std::string_view corpus, int vocab_size,
                                         const std::vector<std::string>& special_tokens) {
  const int64_t n_special = static_cast<int64_t>(special_tokens.size());
  if (vocab_size < 256 + n_special) {
    return InvalidArgument("vocab_size " + std::to_string(vocab_size) + " is smaller than 256 bytes + " +
                           std::to_string(n_special) + " special tokens");
  }
  const size_t target = static_cast<size_t>(vocab_size - n_special);

  WordCounts wc = CountWords(corpus);
  BpeTrainResult res;
  std::unordered_map<std::string, int32_t> token_ids;
  for (int b = 0; b < 256; ++b) {
    res.tokens.push_back(ByteToUnicode(static_cast<uint8_t>(b)));
    token_ids.emplace(res.tokens.back(), b);
  }

  PairTable pairs(wc);
  uint64_t key = 0;
  while (res.tokens.size() < target && pairs.PopBest(&key)) {
    const int32_t a = static_cast<int32_t>(key >> 32);
    const int32_t b = static_cast<int32_t>(key & 0xFFFFFFFFu);
    pairs.Merge(key, AddMerge(a, b, res, token_ids));
  }

  res.token_types.assign(res.tokens.size(), static_cast<int32_t>(TokenType::kNormal));
  PG_RETURN_IF_ERROR(AppendSpecialTokens(special_tokens, res, token_ids));
  return res;
}

}  // namespace pg
