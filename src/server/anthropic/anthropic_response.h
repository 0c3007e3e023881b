// Anthropic Messages API response bodies: the message object, its usage, the
// named SSE events of a stream (message_start, content_block_start /
// _delta / _stop, message_delta, message_stop, ping, error) and the error
// stream's error event (its body is anthropic_error.h's).
//
// Usage carries Anthropic's four counts (anthropic_cache_control.h says how
// the prompt is split between them), "cache_creation" by TTL, and
// prosgrow's own figures nested under "prosgrow" so SDKs ignore them:
//   {"prompt_tokens", "cached_tokens_by_tier": {device, host, disk},
//    "miss_reasons": the OpenAI path's object (MissReasonsJson in
//    core/cache_usage_json.h): {never_seen, evicted, diverged, loading, policy,
//    evicted_by_tier: {device, host, disk}, evicted_seconds_ago}}
//
// Pure functions and a per-stream writer; the writer is not thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "server/anthropic/anthropic_cache_control.h"
#include "server/common/api_error.h"
#include "server/core/cache_usage_json.h"
#include "server/core/generation_output.h"
#include "server/core/generation_runner.h"
#include "server/core/json_text.h"

namespace pg {

// The usage object. `output_tokens` are the completion tokens.
nlohmann::json AnthropicUsageJson(const AnthropicCacheUsage& cache, int64_t output_tokens, const GenerationResult& r);

// end_turn | max_tokens | stop_sequence | tool_use, from the pipeline's finish
// reason ("stop", "length", "tool_calls") and the stop sequence that ended
// the text ("" = none).
std::string AnthropicStopReason(const std::string& finish_reason, const std::string& stop_sequence);

// "toolu_..." for a parsed tool call's "call_..." id.
std::string ToolUseId(const std::string& call_id);
// {"type": "tool_use", "id", "name", "input": {...}}; a call the token limit
// cut has the input its arguments so far make, closed.
nlohmann::json ToolUseBlock(const ToolCall& call);

struct MessageHeader {
  std::string id;  // "msg_..."
  std::string model;
};

// The whole non-streamed message.
nlohmann::json AnthropicMessageJson(const MessageHeader& h, const std::string& text, const std::vector<ToolCall>& calls,
                                    const std::string& stop_reason, const std::string& stop_sequence,
                                    const nlohmann::json& usage);

// "event: <data.type>\ndata: <json>\n\n".
std::string NamedSseEvent(const nlohmann::json& data);

// The events of one streamed message, in order: Start(), Text()* , Finish().
// Text opens a text block on first use; Finish closes it, writes one
// tool_use block per call (its input as one input_json_delta: a cut-off
// call's arguments as far as they got, unclosed), then message_delta and
// message_stop.
class AnthropicStreamWriter {
 public:
  explicit AnthropicStreamWriter(MessageHeader header) : header_(std::move(header)) {}
  // message_start (usage: the prompt's split as AnthropicUsageJson gives it,
  // output_tokens 0; the final figures follow in message_delta) and a ping.
  std::string Start(const nlohmann::json& usage);
  std::string Text(const std::string& text);
  std::string Finish(const std::vector<ToolCall>& calls, const std::string& stop_reason,
                     const std::string& stop_sequence, const nlohmann::json& usage);
  // An error event ends the stream.
  std::string Error(const ApiError& error);

 private:
  MessageHeader header_;
  int next_index_ = 0;
  bool text_open_ = false;
};

}  // namespace pg
