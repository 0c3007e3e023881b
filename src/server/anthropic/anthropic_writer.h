// AnthropicWriter: the ResponseWriter of POST /v1/messages
// (response_writer.h): the message object, or its named SSE events
// (AnthropicStreamWriter, anthropic_response.h), with Anthropic's errors.
//
// The stream opens once the prompt is admitted, so message_start's usage
// carries the prompt's cache split (cache_read_input_tokens,
// cache_creation_input_tokens, input_tokens). Text streams as the model's
// tool-call parser releases it; tool_use blocks follow at the end, each
// input in one input_json_delta (as generated, unclosed, when the token
// limit cut the call). stop_reason: end_turn | max_tokens | stop_sequence |
// tool_use.
//
// Not thread-safe; one per response.
#pragma once

#include <string>
#include <vector>

#include "server/anthropic/anthropic_cache_control.h"
#include "server/anthropic/anthropic_response.h"
#include "server/common/api_error.h"
#include "server/core/response_writer.h"

namespace pg {

class AnthropicWriter final : public ResponseWriter {
 public:
  AnthropicWriter(MessageHeader header, std::vector<BreakpointPrefix> prefixes)
      : header_(header), prefixes_(std::move(prefixes)), stream_(std::move(header)) {}

  const std::string& id() const override { return header_.id; }
  bool StartNeedsAdmission() const override { return true; }
  std::string StreamStart(const GenerationResult& r) override;
  std::string StreamStep(const WriterStep& step) override;
  std::string StreamEnd(const WriterStep& step, const GenerationEnd& end, const GenerationResult& r) override;
  std::string StreamError(const ApiError& error) override;
  std::string Body(const GenerationEnd& end, const std::vector<TokenEvent>& tokens, const GenerationResult& r) override;

 private:
  nlohmann::json Usage(const GenerationResult& r, int64_t output_tokens) const;
  std::string Text(const std::vector<ToolCallEvent>& events);

  MessageHeader header_;
  std::vector<BreakpointPrefix> prefixes_;
  AnthropicStreamWriter stream_;
};

}  // namespace pg
