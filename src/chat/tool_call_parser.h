// ParseToolCalls: turns a model's whole generated text into content and
// OpenAI-style tool calls, in the model's ToolCallFormat
// (tool_call_format.h). It is ToolCallStream (tool_call_stream.h) fed the
// whole text at once, so a streamed response and a non-streamed one always
// carry the same content and calls. In short, per format:
//   - kHermes: every well-formed `<tool_call>{"name": ..., "arguments":
//     {...}}</tool_call>` block is a call ("parameters" is accepted for
//     "arguments"; arguments given as a JSON string holding an object are
//     decoded). Blocks that are not calls, or unterminated before a call
//     could start, stay in the content, byte for byte. With bare_json, a
//     whole output that is one JSON call (Llama 3.1 style) is a call too.
//   - kLlama3Json: the whole output, optionally after <|python_tag|>, being
//     {"name": ..., "parameters": {...}} is a single call.
//   - kGlm45, kDeepSeekV3, kDeepSeekV31: see tool_call_format.h.
// Content is trimmed of leading and trailing whitespace.
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "chat/tool_call_format.h"
#include "chat/tool_call_stream.h"

namespace pg {

struct ParsedToolCall {
  std::string name;
  std::string arguments_json;  // a serialized JSON object, compact
  // The suffix of arguments_json the parser added because the text ended
  // inside the arguments (max_tokens); "" when the model closed them.
  std::string closing;
};

struct ParsedAssistant {
  std::string content;  // text outside the tool calls, trimmed
  std::vector<ParsedToolCall> tool_calls;
};

struct ToolCallParseOptions {
  // kHermes: accept a bare JSON object as the whole output (Llama 3.1). Only
  // sensible when the request offered tools.
  bool bare_json = true;
  ToolCallFormat format = kDefaultToolCallFormat;
  // The request's OpenAI tools array, for GLM argument types (null = none).
  nlohmann::ordered_json tools;
};

ParsedAssistant ParseToolCalls(std::string_view generated, const ToolCallParseOptions& opt);
inline ParsedAssistant ParseToolCalls(std::string_view generated) {
  return ParseToolCalls(generated, ToolCallParseOptions{});
}

// Folds stream events into content and calls (events of several Push and
// Finish calls may be folded one batch after another).
void AppendToolCallEvents(const std::vector<ToolCallEvent>& events, ParsedAssistant* out);

}  // namespace pg
