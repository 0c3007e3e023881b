#include "server/core/tool_call_chunks.h"

#include "server/openai/openai_response.h"

namespace pg {

using json = nlohmann::json;

std::vector<json> ToolCallDeltas(const std::vector<ToolCallEvent>& events, const std::vector<ToolCall>& calls,
                                 bool close_cut) {
  std::vector<json> out;
  std::string content, args;
  int args_index = -1;
  auto flush = [&] {
    if (!content.empty()) out.push_back({{"content", content}});
    if (!args.empty()) out.push_back({{"tool_calls", ToolCallArgumentsDeltaJson(args_index, args)}});
    content.clear();
    args.clear();
  };
  auto add_args = [&](int index, const std::string& text) {
    if (!content.empty() || args_index != index) flush();
    args_index = index;
    args += text;
  };
  for (const ToolCallEvent& ev : events) {
    switch (ev.kind) {
      case ToolCallEvent::Kind::kContent:
        if (!args.empty()) flush();
        content += ev.text;
        break;
      case ToolCallEvent::Kind::kCallStart:
        flush();
        out.push_back(
            {{"tool_calls", ToolCallStartDeltaJson(ev.index, calls[static_cast<size_t>(ev.index)].id, ev.text)}});
        break;
      case ToolCallEvent::Kind::kArguments: add_args(ev.index, ev.text); break;
      case ToolCallEvent::Kind::kCallEnd:
        if (close_cut && !ev.text.empty()) add_args(ev.index, ev.text);
        break;
    }
  }
  flush();
  return out;
}

}  // namespace pg
