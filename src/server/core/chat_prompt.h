// ChatPrompt: OpenAI chat messages (+ tools) -> prompt text through the
// model's chat template, and the tool-call format the template implies
// (generated text is parsed by GenerationOutput, generation_output.h).
//
// The template is ServiceInfo.chat_template (the GGUF's
// tokenizer.chat_template), parsed once. When the model has none, the
// fallback is chat/DefaultChatTemplate(): ChatML turns
//   <|im_start|>{role}\n{content}<|im_end|>\n ... <|im_start|>assistant\n
// with the tools listed in the system turn and tool calls written as
// <tool_call>{json}</tool_call> (Hermes/Qwen style).
//
// Thread-safety: immutable after Create(); Render may run concurrently on
// HTTP threads.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"
#include "chat/tool_call_format.h"
#include "engine/inference_service.h"

namespace pg {

struct ChatPromptOptions {
  // serve --serialize-parallel-tool-calls: assistant turns with several tool
  // calls are replayed as successive call/result turns (chat_replay.h).
  bool serialize_parallel_tool_calls = false;
};

class ChatPrompt {
 public:
  ~ChatPrompt();
  // Fails when the template does not parse.
  static Result<std::unique_ptr<ChatPrompt>> Create(const ServiceInfo& info, ChatPromptOptions options = {});

  // InvalidArgument when the template raises (e.g. roles out of order); the
  // message names the first turn it cannot render (ExplainTemplateError).
  Result<std::string> Render(const nlohmann::ordered_json& messages, const nlohmann::ordered_json& tools) const;
  // Render() with extra template variables (ApiRequest::template_kwargs;
  // null = none), which cannot replace messages, tools or add_generation_prompt.
  Result<std::string> Render(const nlohmann::ordered_json& messages, const nlohmann::ordered_json& tools,
                             const nlohmann::ordered_json& extra) const;
  // Whether the template reads `enable_thinking` (Qwen3, GLM-4.5/4.6): the
  // switch a request's thinking / reasoning settings map onto.
  bool has_thinking_switch() const { return thinking_switch_; }
  // Render() with add_generation_prompt chosen by the caller (/apply-template)
  // and the request's chat_template_kwargs as extra template variables (an
  // object, or null; e.g. Qwen3's enable_thinking).
  Result<std::string> Render(const nlohmann::ordered_json& messages, const nlohmann::ordered_json& tools,
                             bool add_generation_prompt, const nlohmann::ordered_json& template_kwargs = nullptr) const;
  // How this model writes tool calls, detected once from the template text
  // (DetectToolCallFormat; the fallback template's is kHermes).
  ToolCallFormat tool_call_format() const { return tool_call_format_; }

  bool uses_fallback() const { return fallback_; }

 private:
  struct Impl;
  ChatPrompt() = default;
  std::unique_ptr<Impl> impl_;
  bool fallback_ = false;
  bool thinking_switch_ = false;
  ToolCallFormat tool_call_format_ = kDefaultToolCallFormat;
};

// Tokenizes rendered chat text (special tokens parsed; a BOS the template
// already wrote is not doubled).
std::vector<int32_t> EncodeChatText(const Tokenizer& tok, const std::string& text);

}  // namespace pg
