// SynthVocab: the tokenizer.* metadata a make-model file carries, either
// copied from a GGUF (a vocab-only file or a full model) or synthesized: the
// builtin byte-level BPE vocabulary trained on SynthCorpusText().
//
// Builtin vocabulary (Qwen-like): tokenizer.ggml.model "gpt2", pre "qwen2",
// kBuiltinVocabSize tokens = 256 bytes + merges + the specials
// <|endoftext|> <|im_start|> <|im_end|> <tool_call> </tool_call> (control
// tokens, last). As in Qwen2.5-Instruct: bos = padding = <|endoftext|>,
// eos = <|im_end|>, add_bos_token = add_eos_token = false. The chat
// template is the project's default (chat/) when that module provides one.
//
// Thread-safety: BuiltinVocab() trains once per process (guarded); values
// are immutable afterwards.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "base/status.h"
#include "gguf/gguf_file.h"

namespace pg {

constexpr int kBuiltinVocabSize = 8192;

struct SynthVocab {
  int64_t n_tokens = 0;                                 // length of tokenizer.ggml.tokens
  std::vector<std::pair<std::string, GgufValue>> keys;  // tokenizer.* only
};

// Copies every tokenizer.* key of a GGUF file. InvalidArgument when the file
// has no tokenizer.ggml.tokens string array.
Result<SynthVocab> LoadVocabFromGguf(const std::string& path);

// The builtin vocabulary (trained on first use, then cached).
Result<SynthVocab> BuiltinVocab();

}  // namespace pg
