#include "server/tool_call_chunks.h"

#include "server/openai_response.h"

namespace pg {

using json = nlohmann::json;

ToolCallChunks::ToolCallChunks(ToolCallFormat format, nlohmann::ordered_json tools, bool parallel_tool_calls)
    : stream_(format, std::move(tools)), parallel_(parallel_tool_calls) {}

std::vector<json> ToolCallChunks::Push(std::string_view text) {
  std::vector<ToolCallEvent> events;
  stream_.Push(text, &events);
  return Deltas(events);
}

std::vector<json> ToolCallChunks::Finish() {
  std::vector<ToolCallEvent> events;
  stream_.Finish(&events);
  return Deltas(events);
}

std::vector<json> ToolCallChunks::Deltas(const std::vector<ToolCallEvent>& events) {
  std::vector<json> out;
  std::string content, args;
  int args_index = -1;
  auto flush = [&] {
    if (!content.empty()) out.push_back({{"content", content}});
    if (!args.empty()) out.push_back({{"tool_calls", ToolCallArgumentsDeltaJson(args_index, args)}});
    content.clear();
    args.clear();
  };
  for (const ToolCallEvent& ev : events) {
    if (ev.kind == ToolCallEvent::Kind::kContent) {
      if (!args.empty()) flush();
      content += ev.text;
      continue;
    }
    if (ev.index > 0 && !parallel_) continue;
    if (ev.kind == ToolCallEvent::Kind::kCallStart) {
      flush();
      ids_.push_back(NewResponseId("call_"));
      out.push_back({{"tool_calls", ToolCallStartDeltaJson(ev.index, ids_.back(), ev.text)}});
    } else if (ev.kind == ToolCallEvent::Kind::kArguments) {
      if (!content.empty() || args_index != ev.index) flush();
      args_index = ev.index;
      args += ev.text;
    }
  }
  flush();
  return out;
}

}  // namespace pg
