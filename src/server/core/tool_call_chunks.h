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
#include <vector>

#include "server/core/generation_output.h"

namespace pg {

std::vector<nlohmann::json> ToolCallDeltas(const std::vector<ToolCallEvent>& events, const std::vector<ToolCall>& calls,
                                           bool close_cut);

}  // namespace pg
