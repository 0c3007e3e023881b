#include "server/core/generation_output.h"

#include "server/core/response_id.h"

namespace pg {

GenerationOutput::GenerationOutput(bool tools, ToolCallFormat format, nlohmann::ordered_json tool_defs, bool parallel)
    : parallel_(parallel) {
  if (tools) stream_.emplace(format, std::move(tool_defs));
}

std::vector<ToolCallEvent> GenerationOutput::Push(std::string_view text) {
  std::vector<ToolCallEvent> events;
  if (!stream_) {
    if (!text.empty()) events.push_back(ToolCallEvent{ToolCallEvent::Kind::kContent, -1, std::string(text)});
  } else {
    stream_->Push(text, &events);
  }
  return Fold(std::move(events));
}

std::vector<ToolCallEvent> GenerationOutput::Finish() {
  std::vector<ToolCallEvent> events;
  if (stream_) stream_->Finish(&events);
  return Fold(std::move(events));
}

std::vector<ToolCallEvent> GenerationOutput::Fold(std::vector<ToolCallEvent> events) {
  std::vector<ToolCallEvent> out;
  out.reserve(events.size());
  for (ToolCallEvent& ev : events) {
    if (ev.kind != ToolCallEvent::Kind::kContent && ev.index > 0 && !parallel_) continue;
    switch (ev.kind) {
      case ToolCallEvent::Kind::kContent: text_ += ev.text; break;
      case ToolCallEvent::Kind::kCallStart: calls_.push_back(ToolCall{NewResponseId("call_"), ev.text, "", ""}); break;
      case ToolCallEvent::Kind::kArguments: calls_.back().arguments_json += ev.text; break;
      case ToolCallEvent::Kind::kCallEnd: calls_.back().closing = ev.text; break;
    }
    out.push_back(std::move(ev));
  }
  return out;
}

GenerationEnd GenerationOutput::End(const GenerationResult& r) const {
  GenerationEnd end{r.finish_reason, r.stop_sequence, text_, calls_};
  if (end.calls.empty()) return end;
  // A call the token limit cut keeps "length" and its arguments as far as
  // they got; any other open call (EOS or a stop string inside it) is
  // closed into valid JSON and reported as a call.
  if (r.finish_reason == "length" && end.calls.back().cut_off()) return end;
  for (ToolCall& c : end.calls) {
    c.arguments_json += c.closing;
    c.closing.clear();
  }
  end.finish_reason = "tool_calls";
  return end;
}

}  // namespace pg
