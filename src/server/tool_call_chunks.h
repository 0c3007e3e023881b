// ToolCallChunks: the OpenAI streaming deltas of a chat with tools, built
// from ToolCallStream events (src/chat/tool_call_stream.h) as text arrives.
//
// Each Push/Finish returns deltas in order, each one chunk's "delta":
//   {"content": "..."}                      consecutive content merged
//   {"tool_calls": [{index, id, type, function: {name, arguments: ""}}]}   a call starts
//   {"tool_calls": [{index, function: {arguments: "..."}}]}                its arguments, merged per Push
// With parallel_tool_calls false, calls after the first are dropped (as the
// non-streamed response keeps only the first). Call ids are "call_..." and
// kept in ids().
//
// Thread-safety: one per streamed response, used by one thread at a time.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

#include "chat/tool_call_stream.h"

namespace pg {

class ToolCallChunks {
 public:
  ToolCallChunks(ToolCallFormat format, nlohmann::ordered_json tools, bool parallel_tool_calls);

  std::vector<nlohmann::json> Push(std::string_view text);
  std::vector<nlohmann::json> Finish();

  // Calls sent so far (their ids, in index order).
  const std::vector<std::string>& ids() const { return ids_; }

 private:
  std::vector<nlohmann::json> Deltas(const std::vector<ToolCallEvent>& events);

  ToolCallStream stream_;
  bool parallel_;
  std::vector<std::string> ids_;
};

}  // namespace pg
