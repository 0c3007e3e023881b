#include "server/anthropic/anthropic_response.h"

#include "base/bounded_json.h"
#include "server/anthropic/anthropic_error.h"
#include "server/common/api_error.h"
#include "server/core/cache_usage_json.h"
#include "server/core/json_text.h"

namespace pg {

using json = nlohmann::json;

json AnthropicUsageJson(const AnthropicCacheUsage& cache, int64_t output_tokens, const GenerationResult& r) {
  return {{"input_tokens", cache.input_tokens},
          {"output_tokens", output_tokens},
          {"cache_creation_input_tokens", cache.cache_creation_input_tokens},
          {"cache_read_input_tokens", cache.cache_read_input_tokens},
          {"cache_creation",
           {{"ephemeral_5m_input_tokens", cache.ephemeral_5m_input_tokens},
            {"ephemeral_1h_input_tokens", cache.ephemeral_1h_input_tokens}}},
          {"service_tier", "standard"},
          {"prosgrow",
           {{"prompt_tokens", r.prompt_tokens},
            {"cached_tokens_by_tier", CachedByTierJson(r.cache)},
            {"miss_reasons", MissReasonsJson(r.cache.miss)}}}};
}

std::string AnthropicStopReason(const std::string& finish_reason, const std::string& stop_sequence) {
  if (finish_reason == "tool_calls") return "tool_use";
  if (finish_reason == "length") return "max_tokens";
  if (!stop_sequence.empty()) return "stop_sequence";
  return "end_turn";
}

std::string ToolUseId(const std::string& call_id) {
  static const std::string kCall = "call_";
  return "toolu_" + (call_id.rfind(kCall, 0) == 0 ? call_id.substr(kCall.size()) : call_id);
}

json ToolUseBlock(const ToolCall& call) {
  json input = ParseBoundedOrDiscard(call.CompleteArguments());
  if (!input.is_object()) input = json::object();
  return {{"type", "tool_use"}, {"id", ToolUseId(call.id)}, {"name", call.name}, {"input", std::move(input)}};
}

json AnthropicMessageJson(const MessageHeader& h, const std::string& text, const std::vector<ToolCall>& calls,
                          const std::string& stop_reason, const std::string& stop_sequence, const json& usage) {
  json content = json::array();
  if (!text.empty() || calls.empty()) content.push_back({{"type", "text"}, {"text", text}});
  for (const ToolCall& c : calls) content.push_back(ToolUseBlock(c));
  return {{"id", h.id},
          {"type", "message"},
          {"role", "assistant"},
          {"model", h.model},
          {"content", std::move(content)},
          {"stop_reason", stop_reason},
          {"stop_sequence", stop_sequence.empty() ? json(nullptr) : json(stop_sequence)},
          {"usage", usage}};
}

std::string NamedSseEvent(const json& data) {
  return "event: " + data.value("type", std::string("message")) + "\ndata: " + DumpJson(data) + "\n\n";
}

std::string AnthropicStreamWriter::Start(const json& usage) {
  json message = {
      {"id", header_.id},         {"type", "message"},      {"role", "assistant"},      {"model", header_.model},
      {"content", json::array()}, {"stop_reason", nullptr}, {"stop_sequence", nullptr}, {"usage", usage}};
  return NamedSseEvent({{"type", "message_start"}, {"message", std::move(message)}}) +
         NamedSseEvent({{"type", "ping"}});
}

std::string AnthropicStreamWriter::Text(const std::string& text) {
  if (text.empty()) return "";
  std::string out;
  if (!text_open_) {
    text_open_ = true;
    out += NamedSseEvent(
        {{"type", "content_block_start"}, {"index", next_index_}, {"content_block", {{"type", "text"}, {"text", ""}}}});
  }
  out += NamedSseEvent(
      {{"type", "content_block_delta"}, {"index", next_index_}, {"delta", {{"type", "text_delta"}, {"text", text}}}});
  return out;
}

std::string AnthropicStreamWriter::Finish(const std::vector<ToolCall>& calls, const std::string& stop_reason,
                                          const std::string& stop_sequence, const json& usage) {
  std::string out;
  if (!text_open_ && next_index_ == 0 && calls.empty()) {  // as the message object: one (empty) text block
    text_open_ = true;
    out += NamedSseEvent(
        {{"type", "content_block_start"}, {"index", next_index_}, {"content_block", {{"type", "text"}, {"text", ""}}}});
  }
  if (text_open_) {
    out += NamedSseEvent({{"type", "content_block_stop"}, {"index", next_index_++}});
    text_open_ = false;
  }
  for (const ToolCall& c : calls) {
    json block = ToolUseBlock(c);
    const std::string input = c.cut_off() ? c.arguments_json : DumpJson(block["input"]);
    block["input"] = json::object();
    out += NamedSseEvent({{"type", "content_block_start"}, {"index", next_index_}, {"content_block", block}});
    out += NamedSseEvent({{"type", "content_block_delta"},
                          {"index", next_index_},
                          {"delta", {{"type", "input_json_delta"}, {"partial_json", input}}}});
    out += NamedSseEvent({{"type", "content_block_stop"}, {"index", next_index_++}});
  }
  json delta = {{"stop_reason", stop_reason},
                {"stop_sequence", stop_sequence.empty() ? json(nullptr) : json(stop_sequence)}};
  out += NamedSseEvent({{"type", "message_delta"}, {"delta", std::move(delta)}, {"usage", usage}});
  out += NamedSseEvent({{"type", "message_stop"}});
  return out;
}

std::string AnthropicStreamWriter::Error(const ApiError& error) { return NamedSseEvent(AnthropicErrorJson(error)); }

}  // namespace pg
