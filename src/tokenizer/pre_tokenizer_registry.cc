// tokenizer.ggml.pre names -> pre-tokenizer kinds, with llama.cpp's per-name
// defaults (llama_vocab::impl::load), and the names prosgrow refuses.
#include "tokenizer/pre_tokenizer.h"

namespace pg {
namespace {

using K = PreTokenizerKind;

constexpr uint8_t kIgnoreMerges = 1;  // llama.cpp sets ignore_merges
constexpr uint8_t kAddBos = 2;        // llama.cpp defaults add_bos to true
constexpr uint8_t kNoBos = 4;         // llama.cpp drops the default BOS id (glm4)

struct Entry {
  const char* name;
  K kind;
  uint8_t flags;
};

constexpr Entry kNames[] = {
    {"", K::kDefault, 0},
    {"default", K::kDefault, 0},
    // GPT-2's regex.
    {"gpt-2", K::kGpt2, 0},
    {"phi-2", K::kGpt2, 0},
    {"jina-es", K::kGpt2, 0},
    {"jina-de", K::kGpt2, 0},
    {"gigachat", K::kGpt2, 0},
    {"jina-v2-es", K::kGpt2, 0},
    {"jina-v2-de", K::kGpt2, 0},
    {"a.x-4.0", K::kGpt2, 0},
    {"mellum", K::kGpt2, 0},
    {"modern-bert", K::kGpt2, 0},
    {"mpt", K::kGpt2, 0},
    {"olmo", K::kGpt2, 0},
    {"jais", K::kGpt2, 0},
    {"trillion", K::kGpt2, 0},
    {"granite-docling", K::kGpt2, 0},
    {"exaone4", K::kGpt2, 0},
    // \p{N}, then GPT-2's regex.
    {"starcoder", K::kStarcoder, 0},
    {"refact", K::kStarcoder, 0},
    {"command-r", K::kStarcoder, 0},
    {"smollm", K::kStarcoder, 0},
    {"codeshell", K::kStarcoder, 0},
    {"exaone", K::kStarcoder, 0},
    {"minerva-7b", K::kStarcoder, 0},
    {"mellum2", K::kStarcoder, 0},
    // Llama 3's regex.
    {"llama3", K::kLlama3, kIgnoreMerges | kAddBos},
    {"llama-v3", K::kLlama3, kIgnoreMerges | kAddBos},
    {"llama-bpe", K::kLlama3, kIgnoreMerges | kAddBos},
    {"falcon3", K::kLlama3, kIgnoreMerges | kAddBos},
    {"falcon-h1", K::kLlama3, kIgnoreMerges | kAddBos},
    {"pixtral", K::kLlama3, kIgnoreMerges | kAddBos},
    {"midm-2.0", K::kLlama3, kIgnoreMerges | kAddBos},
    {"lfm2", K::kLlama3, kIgnoreMerges | kAddBos},
    {"jina-v5-nano", K::kLlama3, kIgnoreMerges | kAddBos},
    {"dbrx", K::kLlama3, 0},
    {"smaug-bpe", K::kLlama3, 0},
    {"glm4", K::kLlama3, kNoBos},
    {"chatglm-bpe", K::kLlama3, kNoBos},
    {"jais-2", K::kJais2, 0},
    {"minicpm5", K::kMiniCpm5, kIgnoreMerges},
    // Qwen2's regex and its variants.
    {"qwen2", K::kQwen2, 0},
    {"deepseek-r1-qwen", K::kQwen2, 0},
    {"kormo", K::kQwen2, 0},
    {"f2llmv2", K::kQwen2, 0},
    {"megrez", K::kQwen2, 0},
    {"stablelm2", K::kQwen2, 0},
    {"hunyuan", K::kQwen2, 0},
    {"solar-open", K::kQwen2, 0},
    {"grok-2", K::kQwen2, 0},
    {"bailingmoe", K::kQwen2, 0},
    {"bailingmoe2", K::kQwen2, 0},
    {"llada-moe", K::kQwen2, 0},
    {"qwen35", K::kQwen35, 0},
    {"seed-coder", K::kSeedCoder, 0},
    {"ufakzeka", K::kUfakzeka, 0},
    {"laguna", K::kLaguna, 0},
    // DeepSeek and their CJK-aware relatives.
    {"deepseek-llm", K::kDeepseekLlm, 0},
    {"deepseek-coder", K::kDeepseekCoder, 0},
    {"deepseek-v3", K::kDeepseekV3, 0},
    {"hunyuan-dense", K::kDeepseekV3, 0},
    {"joyai-llm", K::kDeepseekV3, 0},
    {"hy_v4", K::kDeepseekV3, 0},
    {"spark2_5", K::kSpark25, 0},
    {"afmoe", K::kAfmoe, 0},
    {"falcon", K::kFalcon, 0},
    // Case-aware (GPT-4o style) regexes.
    {"gpt-4o", K::kGpt4o, 0},
    {"llama4", K::kGpt4o, 0},
    {"kanana2", K::kGpt4o, 0},
    {"talkie", K::kGpt4o, 0},
    {"minimax-m2", K::kGpt4o, 0},
    {"granite-embed-multi-97m", K::kGraniteEmbMulti, kIgnoreMerges},
    {"tekken", K::kTekken, kIgnoreMerges | kAddBos},
    {"youtu", K::kYoutu, kIgnoreMerges},
    {"tiny_aya", K::kTinyAya, 0},
    {"cohere2moe", K::kTinyAya, 0},
    {"kimi-k2", K::kKimiK2, 0},
    {"exaone-moe", K::kExaoneMoe, 0},
    // Split at spaces and sentence punctuation only.
    {"poro-chat", K::kPoro, 0},
    {"bloom", K::kPoro, 0},
    {"gpt3-finnish", K::kPoro, 0},
    {"viking", K::kViking, 0},
    {"superbpe", K::kSuperBpe, 0},
    {"chameleon", K::kChameleon, kAddBos},
};

// Names llama.cpp recognises that prosgrow refuses, and why.
struct Refusal {
  const char* name;
  const char* reason;
};

constexpr const char* kNotByteLevel =
    "its BPE runs on raw UTF-8 without GPT-2 byte encoding (SentencePiece-style spaces), "
    "which prosgrow's byte-level BPE does not implement";
constexpr const char* kAddsSep =
    "this encoder vocabulary appends a SEP token (add_sep), which prosgrow does not implement";

constexpr Refusal kRefused[] = {
    {"gemma4", kNotByteLevel},     {"granite-embed-multi-311m", kNotByteLevel},
    {"sarvam-moe", kNotByteLevel}, {"whitespace", kNotByteLevel},
    {"jina-v1-en", kAddsSep},      {"jina-v2-code", kAddsSep},
    {"roberta-bpe", kAddsSep},
};

}  // namespace

Result<PreTokenizerRecipe> PreTokenizerFromName(const std::string& pre) {
  for (const Entry& e : kNames) {
    if (pre == e.name) {
      PreTokenizerRecipe spec;
      spec.kind = e.kind;
      spec.ignore_merges = (e.flags & kIgnoreMerges) != 0;
      spec.add_bos = (e.flags & kAddBos) != 0;
      spec.no_default_bos = (e.flags & kNoBos) != 0;
      return spec;
    }
  }
  for (const Refusal& r : kRefused) {
    if (pre == r.name) {
      return Unimplemented("unsupported tokenizer pre-tokenizer '" + pre + "': " + r.reason);
    }
  }
  return InvalidArgument("unknown tokenizer pre-tokenizer '" + pre +
                         "' (tokenizer.ggml.pre is not one llama.cpp recognises)");
}

}  // namespace pg
