// Hugging Face tokenizer.json -> Tokenizer (the same object the GGUF loader
// builds), tokenizing as the `tokenizers` library does on the same file.
//
// Supported, and nothing else (anything else is refused by name, e.g.
// "tokenizer.json: model.type 'Unigram' is not supported"):
//   model          BPE: vocab, merges as "a b" strings or [a, b] pairs,
//                  ignore_merges, byte_fallback, unk_token, fuse_unk; no
//                  dropout, no continuing_subword_prefix / end_of_word_suffix
//   normalizer     NFC, NFD, NFKC, NFKD, Replace (string or regex), Prepend,
//                  Sequence
//   pre_tokenizer  Split (string or regex; every behavior; invert), ByteLevel
//                  (last; add_prefix_space, use_regex), Metaspace
//                  (prepend_scheme, split), Digits, Sequence
//   decoder        ByteLevel, Replace (string), ByteFallback, Fuse, Strip,
//                  Metaspace, Sequence
//   post_processor ByteLevel, TemplateProcessing whose `single` is
//                  [special] $A [special] (one token each, both optional),
//                  Sequence
//   added_tokens   special or not, lstrip, rstrip, normalized, single_word
// Regexes run on PCRE2 with \s meaning Unicode White_Space (hf_regex.h).
// Invalid UTF-8 input is first replaced with U+FFFD per maximal ill-formed
// subsequence (what a JavaScript or Rust lossy decode gives Hugging Face).
//
// Mapping onto Tokenizer: added tokens with special = true are control
// tokens (split out of text only when parse_special; Decode drops them unless
// render_special), other added tokens user-defined (always split out, always
// rendered); ids that neither the vocab nor the added tokens define are
// unused. Encode's add_special adds what the post-processor adds.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "base/status.h"
#include "tokenizer/tokenizer.h"

namespace pg {

// What tokenizer_config.json says about special tokens (token texts; absent
// = not said). add_bos / add_eos, when set, override the post-processor, as
// transformers' Llama tokenizers do.
struct HfSpecialTokens {
  std::optional<std::string> bos_token, eos_token, unk_token, pad_token;
  std::optional<bool> add_bos, add_eos;
  // Further end-of-generation ids (generation_config.json's eos_token_id);
  // each must be a token id of the file.
  std::vector<int64_t> eog_ids;
};

// Reads and builds path (a tokenizer.json). Errors are one line naming the
// file and the field.
Result<std::unique_ptr<Tokenizer>> LoadTokenizerJson(const std::string& path, const HfSpecialTokens& specials = {});

// The same from the file's text; `name` is used in error messages.
Result<std::unique_ptr<Tokenizer>> TokenizerFromJsonText(const std::string& text, const HfSpecialTokens& specials,
                                                         const std::string& name = "tokenizer.json");

}  // namespace pg
