// BpeModel: byte-level BPE (tokenizer.ggml.model = "gpt2") over one text
// fragment that contains no special tokens: pre-tokenize into words, map
// each byte to GPT-2's printable code point, then merge adjacent symbols by
// merge rank (lowest first, leftmost on ties) as llama.cpp does.
//
// The merge loop keeps a heap of candidate adjacent pairs and a linked list
// of symbols, so one word of n bytes costs O(n log n).
//
// Thread-safety: immutable after Build(); Encode may run concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/token_index.h"

namespace pg {

class BpeModel {
 public:
  // tokens/index: the vocab. merges: "left right" strings, rank = index.
  // ignore_merges: a word that is itself a token is emitted whole (Llama 3).
  static Result<std::unique_ptr<BpeModel>> Build(const std::vector<std::string>& tokens, const TokenIndex& index,
                                                 const std::vector<std::string>& merges, PreTokenizerKind pre,
                                                 bool ignore_merges);
  // The same from merges already split into (left, right) pairs (tokenizer.json's
  // pair form, whose tokens may hold spaces). where names the merges in errors.
  static Result<std::unique_ptr<BpeModel>> BuildFromPairs(
      const std::vector<std::string>& tokens, const TokenIndex& index,
      const std::vector<std::pair<std::string, std::string>>& merges, PreTokenizerKind pre, bool ignore_merges);

  // Appends the ids of text (raw UTF-8, may be invalid) to out.
  void Encode(std::string_view text, std::vector<int32_t>* out) const;

  // One word that is already pre-tokenized (raw UTF-8 bytes), byte-level:
  // ignore_merges lookup, then merges from the word's bytes.
  void EncodeByteWord(std::string_view word, std::vector<int32_t>* out) const;

  // One pre-tokenized word, character-level (Hugging Face BPE without
  // byte-level encoding): each character is its token if it has one, else
  // its <0xNN> byte tokens when byte_fallback and all 256 exist, else unk_id
  // (consecutive unknowns fused into one when fuse_unk; dropped when unk_id
  // < 0). Then the same merges by rank. ignore_merges looks the word up whole.
  void EncodeCharWord(std::string_view word, bool byte_fallback, int32_t unk_id, bool fuse_unk,
                      std::vector<int32_t>* out) const;

 private:
  struct Merge {
    int32_t rank;
    int32_t result;  // symbol id of left+right
  };
  BpeModel(const TokenIndex& index) : index_(index) {}
  // Id of a symbol text: a vocab id, or an id >= n_vocab_ for text that is
  // not in the vocab but appears in a merge or as a byte symbol.
  int32_t SymbolId(const std::string& text);
  void EncodeWord(const uint8_t* bytes, size_t n, std::vector<int32_t>* out) const;
  // Merges the symbol ids of one word in place, lowest rank first, leftmost on ties.
  void MergeSymbols(std::vector<int32_t>* ids) const;
  void EmitSymbols(const std::vector<int32_t>& ids, std::vector<int32_t>* out) const;

  const TokenIndex& index_;  // owned by the Tokenizer
  int32_t n_vocab_ = 0;
  PreTokenizerKind pre_ = PreTokenizerKind::kDefault;
  bool ignore_merges_ = false;
  int32_t byte_symbol_[256] = {};
  int32_t byte_token_[256] =
      {};  // <0xNN> token of each byte, -1 if none        // symbol id of each byte's printable form
  std::vector<std::string> extra_text_;  // text of symbol ids >= n_vocab_
  std::unordered_map<std::string, int32_t> extra_ids_;
  std::unordered_map<uint64_t, Merge> merges_;  // key: (left id << 32) | right id
};

}  // namespace pg
