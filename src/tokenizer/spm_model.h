// SpmModel: SentencePiece-style BPE (tokenizer.ggml.model = "llama") as
// llama.cpp implements it: start from the UTF-8 characters of the text
// (spaces already replaced by U+2581), repeatedly merge the adjacent pair
// whose concatenation is the highest-scoring token (leftmost on ties), and
// emit characters that never became tokens as <0xNN> byte tokens.
//
// Thread-safety: immutable after Build(); Encode may run concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/token_index.h"

namespace pg {

class SpmModel {
 public:
  SpmModel(const std::vector<float>& scores, const TokenIndex& index, int32_t unk_id);

  // Appends the ids of text (already whitespace-escaped) to out.
  void Encode(std::string_view text, std::vector<int32_t>* out) const;

 private:
  const std::vector<float>& scores_;  // owned by the Tokenizer
  const TokenIndex& index_;
  int32_t unk_id_;
  int32_t byte_token_[256];  // <0xNN> (or the raw byte) token, -1 if none
};

}  // namespace pg
