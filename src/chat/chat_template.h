// ChatTemplate: a model's Jinja chat template (GGUF tokenizer.chat_template)
// parsed once and rendered per request, matching Python Jinja2 as Hugging
// Face's apply_chat_template sets it up (trim_blocks, lstrip_blocks,
// loopcontrols, immutable sandbox, tojson without ASCII escaping,
// raise_exception, strftime_now).
//
// Rendering is bounded (steps, output bytes, call depth; see RenderLimits),
// so a hostile template yields an error, not a hang. All errors are Status;
// no exception escapes.
// Thread-safety: a parsed ChatTemplate is immutable; Render may be called
// from many threads at once.
#pragma once

#include <ctime>
#include <functional>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"
#include "chat/jinja_interpreter.h"

namespace pg {

namespace jinja {
struct Program;
}

struct ChatTemplateSettings {
  jinja::RenderLimits limits;
  // Wall clock seen by strftime_now(); null = the local time now.
  std::function<std::tm()> now;
};

class ChatTemplate {
 public:
  // Syntax errors (and unknown filters/tests) -> InvalidArgument, with line.
  static Result<ChatTemplate> Parse(const std::string& source);

  // Renders with `context` (a JSON object) as the template's variables, plus
  // raise_exception, strftime_now, namespace, range and dict.
  // Errors -> InvalidArgument ("chat template raised: <msg>" for
  // raise_exception, "chat template: <why>" otherwise).
  Result<std::string> Render(const nlohmann::ordered_json& context) const;
  Result<std::string> Render(const nlohmann::ordered_json& context, const ChatTemplateSettings& settings) const;

  const std::string& source() const { return *source_; }

 private:
  std::shared_ptr<const jinja::Program> program_;
  std::shared_ptr<const std::string> source_;
};

struct ChatRenderOptions {
  std::string bos_token, eos_token;
  bool add_generation_prompt = true;
  std::string date_override;  // "YYYY-MM-DD" for strftime_now; "" = today
};

// The server's entry point: `messages` and `tools` as OpenAI JSON (`tools`
// null when none). Adds bos_token, eos_token and add_generation_prompt;
// `extra` (an object, e.g. chat_template_kwargs such as enable_thinking)
// adds further variables but cannot replace messages, tools or
// add_generation_prompt.
Result<std::string> RenderChat(const ChatTemplate& t, const nlohmann::ordered_json& messages,
                               const nlohmann::ordered_json& tools, const ChatRenderOptions& opt,
                               const nlohmann::ordered_json& extra = {});

// ChatML template of prosgrow's synthetic default model: <|im_start|> /
// <|im_end|> turns, tools listed in the system turn, tool calls as
// <tool_call>{"name": ..., "arguments": {...}}</tool_call>, tool results as
// <tool_response> blocks in a user turn.
const char* DefaultChatTemplate();

}  // namespace pg
