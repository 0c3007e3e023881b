// Tokenizer: text <-> token ids for the two tokenizer families found in GGUF
// files, matching llama.cpp's behaviour token for token.
//
//   model "gpt2"  byte-level BPE. Text is first split by the pre-tokenizer
//                 named in tokenizer.ggml.pre (every name llama.cpp knows,
//                 but a few it refuses: see pre_tokenizer_registry.cc), each
//                 piece is mapped byte -> printable code point (GPT-2's byte
//                 encoder) and merged by merge rank.
//   model "llama" SentencePiece-style BPE driven by token scores, with "▁"
//                 for spaces, a prepended space (add_space_prefix) and byte
//                 fallback to <0xNN> tokens.
//
// Special tokens are split out of the text before the model runs, longest
// text first: user-defined (type 4) tokens always, control (3) and unknown
// (2) tokens only when parse_special is true. As in llama.cpp, tokens whose
// text marks an end of turn (<|im_end|>, <|eot_id|>, </s>, <|endoftext|>,
// ...) are treated as control and end-of-generation tokens.
//
// Invalid UTF-8 input never fails: byte-level BPE sees each bad byte as
// U+FFFD (as llama.cpp does), SPM falls back to byte tokens.
//
// Thread-safety: immutable after construction; Encode/Decode may be called
// concurrently from any thread. IncrementalDecoder is per-stream state and
// not thread-safe.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace pg {

class GgufFile;
class GgufWriter;

// tokenizer.ggml.token_type values.
enum class TokenType : int32_t {
  kUndefined = 0,
  kNormal = 1,
  kUnknown = 2,
  kControl = 3,
  kUserDefined = 4,
  kUnused = 5,
  kByte = 6,
};

// The tokenizer metadata of a GGUF, in memory. Arrays are indexed by token id;
// scores and token_types may be empty (defaults: score 0, type normal).
struct VocabData {
  std::string model = "gpt2";   // "gpt2" | "llama"
  std::string pre = "default";  // tokenizer.ggml.pre
  std::vector<std::string> tokens;
  std::vector<float> scores;
  std::vector<int32_t> token_types;
  std::vector<std::string> merges;  // "left right", rank = index (gpt2 only)
  // Absent -> llama.cpp's default for the model (SPM: bos 1, eos 2, unk 0;
  // gpt2: bos = eos = 11), dropped if out of range. A present id must be a
  // valid token id.
  std::optional<int32_t> bos_id;
  std::optional<int32_t> eos_id;
  std::optional<int32_t> unk_id;
  std::optional<int32_t> pad_id;
  std::optional<int32_t> eot_id;
  // Absent -> the llama.cpp default for the model/pre (SPM: BOS yes, EOS no;
  // gpt2: no, except the Llama 3 family, tekken and chameleon, which add BOS).
  std::optional<bool> add_bos;
  std::optional<bool> add_eos;
  std::optional<bool> add_space_prefix;  // SPM only; default true
  // general.name: llama.cpp keys per-token whitespace stripping off it
  // (Phi-3: special tokens swallow the whitespace that follows them).
  std::string name;
};

class Tokenizer {
 public:
  ~Tokenizer();
  Tokenizer(const Tokenizer&) = delete;
  Tokenizer& operator=(const Tokenizer&) = delete;

  // Reads tokenizer.ggml.* metadata. Errors (missing keys, unknown model,
  // mismatched array lengths, special ids out of range, unknown or refused
  // pre) are one-line Statuses naming what is wrong.
  static Result<std::unique_ptr<Tokenizer>> FromGguf(const GgufFile& file);
  // Same validation, from in-memory data (tests, the BPE trainer).
  static Result<std::unique_ptr<Tokenizer>> FromVocab(const VocabData& vocab);
  // Reads the VocabData of a GGUF without building a tokenizer (make-model
  // copies it into the files it writes).
  static Result<VocabData> ReadVocab(const GgufFile& file);

  // add_special: add BOS/EOS as the metadata says. parse_special: recognise
  // control/user-defined token text (e.g. "<|im_start|>") in the input.
  std::vector<int32_t> Encode(std::string_view text, bool add_special, bool parse_special) const;

  // The token as stored in the vocab (byte-level encoded for gpt2, with "▁"
  // for SPM). PG_CHECKs that id is in range; validate ids from users first
  // (IsValid).
  const std::string& TokenText(int32_t id) const;
  // The raw bytes this token stands for: byte-level decoded (gpt2), "▁" ->
  // space and <0xNN> -> byte (SPM). Control tokens give "" unless
  // render_special; user-defined tokens are always rendered. Out-of-range
  // ids give "".
  std::string TokenToPiece(int32_t id, bool render_special = false) const;
  // Concatenated pieces; for SPM with add_space_prefix the first token's
  // leading space is dropped (as llama.cpp's detokenize does), so
  // Decode(Encode(x, false, false)) == x for valid UTF-8 x whose bytes all
  // have tokens (SPM: and that holds neither U+2581, which decodes to a
  // space, nor a user-defined token's text, since the text after a special
  // token gets the space prefix too, as in llama.cpp).
  // No clean-up of spaces before punctuation is applied.
  std::string Decode(const std::vector<int32_t>& ids, bool render_special = false) const;

  int32_t n_vocab() const { return static_cast<int32_t>(tokens_.size()); }
  bool IsValid(int32_t id) const { return id >= 0 && id < n_vocab(); }
  int32_t bos_id() const { return bos_id_; }  // -1 if none
  int32_t eos_id() const { return eos_id_; }  // -1 if none
  int32_t eot_id() const { return eot_id_; }  // -1 if none
  int32_t unk_id() const { return unk_id_; }  // -1 if none
  int32_t pad_id() const { return pad_id_; }  // -1 if none
  // End of generation: EOS, EOT, and control tokens such as <|im_end|>,
  // <|eot_id|>, <|end_of_text|>, <|endoftext|>, <|end|>, </s>.
  bool IsEog(int32_t id) const;
  TokenType token_type(int32_t id) const;
  bool IsControl(int32_t id) const { return token_type(id) == TokenType::kControl; }
  bool add_bos() const { return add_bos_; }
  bool add_eos() const { return add_eos_; }
  std::optional<int32_t> FindToken(std::string_view text) const;
  const std::string& model() const { return model_; }
  const std::string& pre() const { return pre_; }

  // Implementation types (tokenizer_*.cc); opaque to callers.
  struct Impl;

 private:
  Tokenizer();
  std::string model_;
  std::string pre_;
  std::vector<std::string> tokens_;
  std::vector<TokenType> types_;
  int32_t bos_id_ = -1, eos_id_ = -1, unk_id_ = -1, pad_id_ = -1, eot_id_ = -1;
  bool add_bos_ = false, add_eos_ = false, add_space_prefix_ = false;
  std::vector<uint8_t> eog_;    // by id: 1 if end-of-generation
  std::vector<uint8_t> strip_;  // by id: kStripLeft | kStripRight around special matches
  std::unique_ptr<Impl> impl_;
};

// Turns a stream of token ids into text, holding back an incomplete UTF-8
// sequence at the end until the token that completes it arrives. Push returns
// only complete characters; Flush returns whatever is held back (invalid or
// truncated bytes included, as they are). Not thread-safe; one per stream.
class IncrementalDecoder {
 public:
  explicit IncrementalDecoder(const Tokenizer& tokenizer, bool render_special = false)
      : tok_(tokenizer), render_special_(render_special) {}
  std::string Push(int32_t id);
  std::string Flush();

 private:
  const Tokenizer& tok_;
  bool render_special_;
  std::string pending_;  // bytes of an incomplete trailing UTF-8 sequence
};

// Writes vocab as tokenizer.ggml.* metadata (the keys ReadVocab reads and
// llama.cpp loads). Absent optional fields are not written; absent special
// ids stay absent.
void WriteVocab(const VocabData& vocab, GgufWriter* writer);

// Byte-level BPE training (see bpe_trainer.cc).
struct BpeTrainResult {
  std::vector<std::string> tokens;   // byte-level encoded, as in a GGUF
  std::vector<int32_t> token_types;  // TokenType values
  std::vector<std::string> merges;   // "left right", in rank order
};

// Trains a byte-level (gpt2-style, pre-tokenizer "qwen2" compatible) BPE
// vocabulary of vocab_size tokens: the 256 byte tokens, then one token per
// merge, then special_tokens (type control) at the end. Fails if vocab_size
// is smaller than 256 + special_tokens.size(); stops early (fewer tokens)
// when no pair occurs twice.
Result<BpeTrainResult> TrainByteLevelBpe(std::string_view corpus, int vocab_size,
                                         const std::vector<std::string>& special_tokens);

// The VocabData of a trained vocabulary: model "gpt2", pre "qwen2", no BOS
// added; bos_id and eos_id are the first special token (the usual
// "<|endoftext|>" position), absent if there are no special tokens.
VocabData ToVocabData(const BpeTrainResult& trained);

}  // namespace pg
