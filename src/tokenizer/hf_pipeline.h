// HfPipeline: the steps of a Hugging Face tokenizer.json around its BPE
// model, run as the `tokenizers` library runs them:
//
//   added tokens split out of the raw text (leftmost, then longest; lstrip,
//   rstrip, single_word) -> normalizers on each remaining piece -> added
//   tokens marked `normalized` split out of the normalized text ->
//   pre-tokenizers (Split, ByteLevel, Metaspace, Digits) -> the BPE model on
//   each word (byte-level when a ByteLevel pre-tokenizer ends the list, else
//   character-level with byte fallback) ; ids -> decoders on the token texts.
//
// hf_tokenizer_json.cc builds it from the JSON and refuses, by name, every
// component it does not list. Private to src/tokenizer.
// Thread-safety: immutable after construction; Encode/Decode run concurrently.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "tokenizer/bpe_model.h"
#include "tokenizer/hf_regex.h"

namespace pg {

struct HfNormalizer {
  enum class Kind { kNfc, kNfd, kNfkc, kNfkd, kReplace, kPrepend } kind;
  std::string pattern;                   // Replace: literal pattern (when regex is null)
  std::shared_ptr<const HfRegex> regex;  // Replace: regex pattern
  std::string content;                   // Replace: replacement; Prepend: prefix
};

struct HfPreTokenizer {
  enum class Kind { kSplit, kByteLevel, kMetaspace } kind;
  // Split (Digits becomes a Split on \p{N} or \p{N}+, isolated).
  enum class Behavior { kRemoved, kIsolated, kMergedWithPrevious, kMergedWithNext, kContiguous };
  std::shared_ptr<const HfRegex> regex;  // null: literal `literal`
  std::string literal;
  Behavior behavior = Behavior::kIsolated;
  bool invert = false;
  // ByteLevel.
  bool add_prefix_space = false;
  std::shared_ptr<const HfRegex> gpt2_regex;  // set when use_regex
  // Metaspace.
  std::string replacement;  // UTF-8 of the replacement character
  enum class Prepend { kAlways, kFirst, kNever } prepend = Prepend::kAlways;
  bool split = true;
};

struct HfDecoder {
  enum class Kind { kByteLevel, kReplace, kByteFallback, kFuse, kStrip, kMetaspace } kind;
  std::string pattern, content;  // Replace: literal; Strip: content; Metaspace: replacement
  int start = 0, stop = 0;       // Strip
  bool prepend = true;           // Metaspace: the first token's leading space is dropped
};

struct HfAddedToken {
  std::string content;
  int32_t id = -1;
  bool special = false;
  bool lstrip = false, rstrip = false, normalized = false, single_word = false;
  std::string match;  // what is searched for: content, normalized when `normalized`
};

class HfPipeline {
 public:
  std::vector<HfNormalizer> normalizers;
  std::vector<HfPreTokenizer> pre_tokenizers;  // a ByteLevel, if any, is last
  std::vector<HfDecoder> decoders;
  std::vector<HfAddedToken> added;  // sorted by match text length, longest first
  bool byte_level = false;          // the model runs on bytes (ByteLevel pre-tokenizer)
  bool byte_fallback = false, fuse_unk = false;
  int32_t unk_id = -1;
  const BpeModel* bpe = nullptr;  // owned by the Tokenizer

  // Call once the fields are set: indexes the added tokens.
  void Finish();

  // Appends the ids of text (any bytes; invalid UTF-8 is first replaced by
  // U+FFFD per maximal ill-formed subsequence, as a JavaScript TextDecoder
  // and Rust's from_utf8_lossy do). Special added tokens are split out only
  // when parse_special (Hugging Face's encode_special_tokens = false).
  void Encode(std::string_view text, bool parse_special, std::vector<int32_t>* out) const;

  // The normalizers applied to text (valid UTF-8).
  std::string Normalize(std::string text) const;

  // The decoders over token texts. streaming: one token of a stream, so no
  // first-token rule (Strip's start, Metaspace's leading space) and byte
  // tokens give their raw byte.
  std::string Decode(std::vector<std::string> tokens, bool streaming) const;

 private:
  struct Piece {
    std::string_view text;
    int32_t token;  // >= 0: an added token
    bool at_start;  // begins at the start of the input
  };
  void SplitAdded(std::string_view text, bool normalized_pass, bool parse_special, bool at_start,
                  std::vector<Piece>* out) const;
  void PreTokenize(std::string text, bool at_start, std::vector<std::string>* words) const;
  std::vector<int32_t> by_first_byte_[256];  // indexes into added, longest first
};

// text with each maximal ill-formed UTF-8 subsequence replaced by U+FFFD.
std::string ToValidUtf8(std::string_view text);

}  // namespace pg
