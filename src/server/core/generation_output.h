// GenerationOutput: the visible text of one generation as it arrives, read
// once, by the model's tool-call parser (src/chat/tool_call_stream.h), when
// the request offered tools; and GenerationEnd, how the generation ended, in
// the terms both APIs report it (OpenAI's finish_reason and tool_calls,
// Anthropic's stop_reason and tool_use blocks).
//
// Push() the text of each GenerationRunner::Poll, Finish() once at the end,
// then End(). Each returns the events the text made visible:
//   - without tools, the text as is, one kContent event per Push;
//   - with tools, ToolCallStream's events (content outside the calls,
//     trimmed as a whole; each call's start, arguments fragments and end),
//     only the first call's when parallel tool calls are off.
// Streamed and non-streamed responses feed the same class (the latter all
// the text in one Push), so both carry the same content and calls.
//
// Not thread-safe; one per response.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "chat/tool_call_stream.h"
#include "server/core/generation_runner.h"

namespace pg {

struct ToolCall {
  std::string id;  // "call_..."
  std::string name;
  // The arguments as generated: a JSON object's text, or, when cut_off(),
  // as far as the model got before the token limit.
  std::string arguments_json;
  std::string closing;  // cut off: what closes arguments_json into a JSON object
  bool cut_off() const { return !closing.empty(); }
  std::string CompleteArguments() const { return arguments_json + closing; }
};

struct GenerationEnd {
  // "stop" | "length" | "tool_calls". A call cut off by the token limit
  // leaves "length" (and its arguments as far as they got).
  std::string finish_reason;
  std::string stop_sequence;    // the stop string that ended the text ("" = none)
  std::string text;             // the visible text; with tools, the content outside the calls
  std::vector<ToolCall> calls;  // the parsed calls, in order
};

class GenerationOutput {
 public:
  // `tool_defs` (the request's OpenAI tools array) types GLM arguments.
  GenerationOutput(bool tools, ToolCallFormat format, nlohmann::ordered_json tool_defs, bool parallel);

  std::vector<ToolCallEvent> Push(std::string_view text);
  std::vector<ToolCallEvent> Finish();

  bool tools() const { return stream_.has_value(); }
  // The calls so far; ids are assigned as each call starts.
  const std::vector<ToolCall>& calls() const { return calls_; }
  // After Finish(): the end of a generation whose result is `r` (finished
  // "stop" or "length").
  GenerationEnd End(const GenerationResult& r) const;

 private:
  std::vector<ToolCallEvent> Fold(std::vector<ToolCallEvent> events);

  std::optional<ToolCallStream> stream_;  // with tools
  bool parallel_ = true;
  std::string text_;  // visible content so far
  std::vector<ToolCall> calls_;
};

}  // namespace pg
