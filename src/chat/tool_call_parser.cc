#include "chat/tool_call_parser.h"

namespace pg {

void AppendToolCallEvents(const std::vector<ToolCallEvent>& events, ParsedAssistant* out) {
  for (const ToolCallEvent& ev : events) {
    switch (ev.kind) {
      case ToolCallEvent::Kind::kContent: out->content += ev.text; break;
      case ToolCallEvent::Kind::kCallStart: out->tool_calls.push_back(ParsedToolCall{ev.text, "", ""}); break;
      case ToolCallEvent::Kind::kArguments: out->tool_calls.back().arguments_json += ev.text; break;
      case ToolCallEvent::Kind::kCallEnd:
        out->tool_calls.back().arguments_json += ev.text;
        out->tool_calls.back().closing = ev.text;
        break;
    }
  }
}

ParsedAssistant ParseToolCalls(std::string_view generated, const ToolCallParseOptions& opt) {
  ToolCallStream stream(opt.format, opt.tools, opt.bare_json);
  std::vector<ToolCallEvent> events;
  stream.Push(generated, &events);
  stream.Finish(&events);
  ParsedAssistant out;
  AppendToolCallEvents(events, &out);
  return out;
}

}  // namespace pg
