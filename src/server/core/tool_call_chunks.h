// ToolCallDeltas: the OpenAI streaming deltas of a chat with tools, built
// from GenerationOutput's events (src/chat/tool_call_stream.h) as text arrives.
//
// Returns deltas in order, each one chunk's "delta":
//   {"content": "..."}                      consecutive content merged
//   {"tool_calls": [{index, id, type, function: {name, arguments: ""}}]}   a call starts
//   {"tool_calls": [{index, function: {arguments: "..."}}]}                its arguments, merged per call
// `calls` are the output's calls (their ids, by index). A call cut off by
// the end of the text gets its closing appended only when `close_cut` (the
// generation did not stop at the token limit); otherwise its arguments stay
// as far as they got.
//
// Thread-safety: a pure function.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/core/generation_output.h"

namespace pg {

std::vector<nlohmann::json> ToolCallDeltas(const std::vector<ToolCallEvent>& events, const std::vector<ToolCall>& calls,
                                           bool close_cut);

// One streamed tool call as a chat delta's "tool_calls" array (one entry):
// the first chunk of a call carries its id, type and name with empty
// arguments; the following ones carry argument fragments only:
//   [{"index": i, "id": "call_...", "type": "function", "function": {"name": N, "arguments": ""}}]
//   [{"index": i, "function": {"arguments": "<fragment>"}}]
nlohmann::json ToolCallStartDeltaJson(int index, const std::string& id, const std::string& name);
nlohmann::json ToolCallArgumentsDeltaJson(int index, const std::string& fragment);

}  // namespace pg
