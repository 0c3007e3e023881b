// Tokenizer::Impl, the state behind Tokenizer that tokenizer.cc (encode,
// decode) and tokenizer_vocab.cc (building it from VocabData) share.
// Private to src/tokenizer.
#pragma once

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "tokenizer/bpe_model.h"
#include "tokenizer/hf_pipeline.h"
#include "tokenizer/hf_tokenizer.h"
#include "tokenizer/pre_tokenizer.h"
#include "tokenizer/spm_model.h"
#include "tokenizer/token_index.h"
#include "tokenizer/tokenizer.h"

namespace pg {

// Tokenizer::strip_ bits: whitespace a special token's match takes with it.
inline constexpr uint8_t kStripLeft = 1;   // drop whitespace before the token's text
inline constexpr uint8_t kStripRight = 2;  // drop whitespace after it

struct Tokenizer::Impl {
  TokenIndex index;                  // token text -> id
  std::vector<float> scores;         // by id (SPM merge priority)
  std::vector<int32_t> special_ids;  // control/user-defined/unknown, longest text first
  std::unique_ptr<BpeModel> bpe;
  std::unique_ptr<SpmModel> spm;
  // Set for a tokenizer.json: Encode/Decode run Hugging Face's pipeline.
  std::unique_ptr<HfPipeline> hf;
  TokenIndex model_index;  // tokenizer.json: the BPE model's own vocab (no added tokens)

  // The steps of FromVocab, in order. Impl is nested in Tokenizer, so these
  // reach its private fields.
  static Status LoadTokens(const VocabData& v, Tokenizer& t);
  static Status ResolveSpecials(const VocabData& v, bool spm, const PreTokenizerRecipe& pre_spec, Tokenizer& t);
  static void DeriveEogAndControl(Tokenizer& t);
  static void CollectSpecialIds(Tokenizer& t);
  static void SetStripAttributes(const std::string& model_name, Tokenizer& t);
  // hf_tokenizer_json.cc: a Tokenizer from a parsed tokenizer.json.
  static Result<std::unique_ptr<Tokenizer>> FromHfJson(const nlohmann::json& j, const HfSpecialTokens& specials);
};

}  // namespace pg
