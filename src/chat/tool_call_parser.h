// ParseToolCalls: turns a model's generated text back into OpenAI-style
// tool calls.
//   - Qwen/Hermes style: every well-formed
//     `<tool_call>{"name": ..., "arguments": {...}}</tool_call>` block becomes
//     a call ("parameters" is accepted for "arguments"; arguments given as a
//     JSON string holding an object are decoded). Malformed or unterminated
//     blocks stay in the content, untouched.
//   - Llama-3.1 style (when bare_json is on and no <tool_call> tag occurs):
//     the whole output, optionally after <|python_tag|>, being one JSON object
//     {"name": ..., "parameters": {...}} is a single call.
// Thread-safety: pure functions.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace pg {

struct ParsedToolCall {
  std::string name;
  std::string arguments_json;  // a serialized JSON object, compact
};

struct ParsedAssistant {
  std::string content;  // text outside the tool_call blocks, trimmed
  std::vector<ParsedToolCall> tool_calls;
};

struct ToolCallParseOptions {
  // Accept a bare JSON object as the whole output (Llama 3.1). Only sensible
  // when the request offered tools.
  bool bare_json = true;
};

ParsedAssistant ParseToolCalls(std::string_view generated, const ToolCallParseOptions& opt);
inline ParsedAssistant ParseToolCalls(std::string_view generated) {
  return ParseToolCalls(generated, ToolCallParseOptions{});
}

}  // namespace pg
