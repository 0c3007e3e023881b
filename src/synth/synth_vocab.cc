#include "synth/synth_vocab.h"

#include <mutex>
#include <optional>

#include "chat/chat_template.h"
#include "synth/corpus_text.h"
#include "tokenizer/tokenizer.h"

namespace pg {
namespace {

GgufValue StringValue(std::string s) {
  GgufValue v;
  v.type = GgufValueType::STRING;
  v.v = std::move(s);
  return v;
}
GgufValue U32Value(uint32_t x) {
  GgufValue v;
  v.type = GgufValueType::UINT32;
  v.v = uint64_t{x};
  return v;
}
GgufValue BoolValue(bool b) {
  GgufValue v;
  v.type = GgufValueType::BOOL;
  v.v = b;
  return v;
}

Result<SynthVocab> TrainBuiltin() {
  const std::vector<std::string> specials = {"<|endoftext|>", "<|im_start|>", "<|im_end|>", "<tool_call>",
                                             "</tool_call>"};
  PG_ASSIGN_OR_RETURN(BpeTrainResult bpe, TrainByteLevelBpe(SynthCorpusText(), kBuiltinVocabSize, specials));
  auto id_of = [&](const std::string& s) -> int64_t {
    for (size_t i = 0; i < bpe.tokens.size(); ++i)
      if (bpe.tokens[i] == s) return static_cast<int64_t>(i);
    return -1;
  };
  const int64_t eot = id_of("<|endoftext|>"), im_end = id_of("<|im_end|>");
  if (eot < 0 || im_end < 0) return Internal("builtin vocabulary lacks its special tokens");
  if (bpe.token_types.size() != bpe.tokens.size()) return Internal("builtin vocabulary: token types mismatch");

  SynthVocab v;
  v.n_tokens = static_cast<int64_t>(bpe.tokens.size());
  v.keys.emplace_back("tokenizer.ggml.model", StringValue("gpt2"));
  v.keys.emplace_back("tokenizer.ggml.pre", StringValue("qwen2"));
  GgufValue tokens;
  tokens.type = GgufValueType::ARRAY;
  tokens.array_type = GgufValueType::STRING;
  tokens.v = std::move(bpe.tokens);
  v.keys.emplace_back("tokenizer.ggml.tokens", std::move(tokens));
  GgufValue types;
  types.type = GgufValueType::ARRAY;
  types.array_type = GgufValueType::INT32;
  types.v = std::vector<int64_t>(bpe.token_types.begin(), bpe.token_types.end());
  v.keys.emplace_back("tokenizer.ggml.token_type", std::move(types));
  GgufValue merges;
  merges.type = GgufValueType::ARRAY;
  merges.array_type = GgufValueType::STRING;
  merges.v = std::move(bpe.merges);
  v.keys.emplace_back("tokenizer.ggml.merges", std::move(merges));
  v.keys.emplace_back("tokenizer.ggml.bos_token_id", U32Value(static_cast<uint32_t>(eot)));
  v.keys.emplace_back("tokenizer.ggml.eos_token_id", U32Value(static_cast<uint32_t>(im_end)));
  v.keys.emplace_back("tokenizer.ggml.padding_token_id", U32Value(static_cast<uint32_t>(eot)));
  v.keys.emplace_back("tokenizer.ggml.add_bos_token", BoolValue(false));
  v.keys.emplace_back("tokenizer.ggml.add_eos_token", BoolValue(false));
  v.keys.emplace_back("tokenizer.chat_template", StringValue(DefaultChatTemplate()));
  return v;
}

}  // namespace

Result<SynthVocab> LoadVocabFromGguf(const std::string& path) {
  PG_ASSIGN_OR_RETURN(auto f, GgufFile::Open(path));
  const GgufValue* tokens = f->Find("tokenizer.ggml.tokens");
  if (tokens == nullptr || !tokens->is_array() || tokens->array_type != GgufValueType::STRING ||
      tokens->array_size() == 0)
    return InvalidArgument(path + ": no tokenizer.ggml.tokens string array (not a vocab file)");
  SynthVocab v;
  v.n_tokens = static_cast<int64_t>(tokens->array_size());
  for (const auto& [key, value] : f->metadata())
    if (key.rfind("tokenizer.", 0) == 0) v.keys.emplace_back(key, value);
  return v;
}

Result<SynthVocab> BuiltinVocab() {
  static std::mutex mu;
  static std::optional<Result<SynthVocab>> cached;
  std::lock_guard<std::mutex> lock(mu);
  if (!cached) cached.emplace(TrainBuiltin());
  return *cached;
}

}  // namespace pg
