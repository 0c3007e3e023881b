#include "server/core/tool_call_chunks.h"

namespace pg {

using json = nlohmann::json;

json ToolCallStartDeltaJson(int index, const std::string& id, const std::string& name) {
  return json::array(
      {{{"index", index}, {"id", id}, {"type", "function"}, {"function", {{"name", name}, {"arguments", ""}}}}});
}

json ToolCallArgumentsDeltaJson(int index, const std::string& fragment) {
  return json::array({{{"index", index}, {"function", {{"arguments", fragment}}}}});
}

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
