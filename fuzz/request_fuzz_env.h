// RequestFuzzEnv: what request_path_fuzz runs each input against, built once
// per process and read-only afterwards:
//   - tokenizers built in-process (no model file): one byte-level BPE
//     vocabulary trained on the templates' own text, loaded under several
//     pre-tokenizers (qwen2, llama-bpe, gpt-2, deepseek-llm, falcon), and a
//     small SentencePiece vocabulary with byte fallback;
//   - the server's ChatPrompt over the built-in default template and over
//     each real model template compiled in from ../shared/fixtures/templates
//     (when present at configure time; model templates stay out of the tree),
//     each paired with the tokenizer of its family.
// Any failure to build it is a bug in the fuzzer setup: it aborts.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "server/common/request_limits.h"
#include "server/core/chat_prompt.h"
#include "tokenizer/tokenizer.h"

namespace pg {

struct EmbeddedTemplate {
  const char* name;    // file name without .jinja
  const char* source;  // the template text
};

// ../shared/fixtures/templates/*.jinja (generated file request_fuzz_templates.cc;
// empty when the fixtures are absent).
const std::vector<EmbeddedTemplate>& EmbeddedTemplates();

struct FuzzChatPrompt {
  std::string name;  // "default" or the template's file name
  std::unique_ptr<ChatPrompt> prompt;
  const Tokenizer* tokenizer = nullptr;  // the family's tokenizer (owned by the env)
};

struct RequestFuzzEnv {
  // Same vocabulary, different pre-tokenizers; [0] is qwen2 (ChatML models),
  // [1] llama-bpe (adds BOS <|begin_of_text|>).
  std::vector<std::unique_ptr<Tokenizer>> bpe;
  std::unique_ptr<Tokenizer> spm;
  std::vector<FuzzChatPrompt> prompts;  // [0] is the built-in default template
  RequestLimits limits;                 // the `prosgrow serve` defaults
  int64_t n_vocab = 0;                  // of bpe[0]: bounds token-id prompts
  int64_t n_ctx = 4096;
};

// Built on first call.
const RequestFuzzEnv& GetRequestFuzzEnv();

}  // namespace pg
