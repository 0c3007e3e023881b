// PreTokenizer: splits text into the words that byte-level BPE merges within,
// reproducing llama.cpp's pre-tokenizer for each tokenizer.ggml.pre.
//
// llama.cpp describes each pre-tokenizer as a list of regexes applied in
// turn: every regex splits each current piece into its matches and the gaps
// between them (both kept). Here each regex is a hand-written scanner over
// code points, linear in the piece length: no std::regex, no backtracking
// (pre_tokenizer_scan.h holds the shared matchers). The names and their
// kinds are in pre_tokenizer_registry.cc; names llama.cpp knows but
// prosgrow does not implement are refused there with the reason.
//
// Thread-safety: immutable; Split may be called concurrently.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace pg {

// One kind per distinct regex list (llama.cpp's LLAMA_VOCAB_PRE_TYPE_*,
// merged where two types share their regexes).
enum class PreTokenizerKind {
  kDefault,          // "default" (and missing pre): llama.cpp's fallback regex list
  kGpt2,             // "gpt-2", "mpt", "olmo", ...: the GPT-2 regex
  kStarcoder,        // "starcoder", "refact", "command-r", ...: digits one by one, then GPT-2
  kLlama3,           // "llama-bpe", "glm4", "dbrx", ...: Llama 3 regex (digits in groups of up to 3)
  kJais2,            // "jais-2": Llama 3 with whitespace runs cut at powers of two
  kQwen2,            // "qwen2", "grok-2", "bailingmoe", ...: Llama 3 with digits one by one
  kQwen35,           // "qwen35": Qwen2 with marks joining letters
  kSeedCoder,        // "seed-coder": Qwen2 without the newline tail on punctuation runs
  kUfakzeka,         // "ufakzeka": Qwen2 without contractions
  kLaguna,           // "laguna": lines apart from newline runs, then Qwen2
  kMiniCpm5,         // "minicpm5": digit groups of up to 3, then Llama 3 with \p{N}+
  kDeepseekLlm,      // "deepseek-llm"
  kDeepseekCoder,    // "deepseek-coder"
  kDeepseekV3,       // "deepseek-v3", "hunyuan-dense", "joyai-llm", "hy_v4"
  kSpark25,          // "spark2_5"
  kAfmoe,            // "afmoe"
  kFalcon,           // "falcon"
  kGpt4o,            // "gpt-4o", "llama4", "minimax-m2", ...: letters split at case changes
  kGraniteEmbMulti,  // "granite-embed-multi-97m": GPT-4o with marks in the letter test
  kTekken,           // "tekken": GPT-4o without contractions, digits one by one
  kYoutu,            // "youtu"
  kTinyAya,          // "tiny_aya", "cohere2moe"
  kKimiK2,           // "kimi-k2"
  kExaoneMoe,        // "exaone-moe"
  kPoro,             // "poro-chat", "bloom", "gpt3-finnish"
  kViking,           // "viking"
  kSuperBpe,         // "superbpe"
  kChameleon,        // "chameleon": sentinel and image-token texts, spaces, digits, punctuation, GPT-2
};

// What a tokenizer.ggml.pre value means to the tokenizer, with llama.cpp's
// per-name defaults.
struct PreTokenizerRecipe {
  PreTokenizerKind kind = PreTokenizerKind::kDefault;
  bool ignore_merges = false;   // a word that is itself a token is emitted whole
  bool add_bos = false;         // add_bos default (tokenizer.ggml.add_bos_token overrides)
  bool no_default_bos = false;  // no BOS id unless tokenizer.ggml.bos_token_id names one
};

// Maps a tokenizer.ggml.pre value to its spec. Unimplemented (naming the
// pre-tokenizer and why) for names llama.cpp knows that prosgrow refuses;
// InvalidArgument for names llama.cpp does not know either.
Result<PreTokenizerRecipe> PreTokenizerFromName(const std::string& pre);

// Splits cpts (code points of one text fragment) into words; returns the
// length in code points of each word, in order, summing to cpts.size().
std::vector<size_t> PreTokenize(PreTokenizerKind kind, const std::vector<uint32_t>& cpts);

}  // namespace pg
