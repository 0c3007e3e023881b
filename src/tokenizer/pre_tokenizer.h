// PreTokenizer: splits text into the words that byte-level BPE merges within,
// reproducing llama.cpp's pre-tokenizer for each tokenizer.ggml.pre.
//
// llama.cpp describes each pre-tokenizer as a list of regexes applied in
// turn: every regex splits each current piece into its matches and the gaps
// between them (both kept). Here each regex is a hand-written scanner over
// code points, linear in the piece length: no std::regex, no backtracking.
//
// Thread-safety: immutable; Split may be called concurrently.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace pg {

enum class PreTokenizerKind {
  kDefault,        // "default" (and missing pre): llama.cpp's fallback regex list
  kGpt2,           // "gpt-2" and aliases
  kLlama3,         // "llama-bpe", "llama3", ... (digits in groups of up to 3)
  kQwen2,          // "qwen2", "deepseek-r1-qwen", ... (digits one by one)
  kDeepseekLlm,    // "deepseek-llm"
  kDeepseekCoder,  // "deepseek-coder"
  kFalcon,         // "falcon"
};

// Maps a tokenizer.ggml.pre value to its kind; InvalidArgument if unknown.
Result<PreTokenizerKind> PreTokenizerFromName(const std::string& pre);

// Splits cpts (code points of one text fragment) into words; returns the
// length in code points of each word, in order, summing to cpts.size().
std::vector<size_t> PreTokenize(PreTokenizerKind kind, const std::vector<uint32_t>& cpts);

}  // namespace pg
