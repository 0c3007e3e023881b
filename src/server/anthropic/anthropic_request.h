// AnthropicRequest: a validated POST /v1/messages (or /v1/messages/count_tokens)
// body, converted to the internal ApiRequest the OpenAI chat path uses.
//
//   system (string | text blocks)          -> a leading {"role": "system"} message
//   user text blocks                       -> {"role": "user", "content": joined text}
//   user tool_result blocks                -> {"role": "tool", "tool_call_id", "content"}
//                                             (is_error: content prefixed "Error: ")
//   assistant text + tool_use blocks       -> {"role": "assistant", "content",
//                                              "tool_calls": [{id, function: {name, arguments: {...}}}]}
//   assistant thinking blocks              -> the message's reasoning_content (redacted_thinking dropped)
//   {"role": "system"} turns in messages   -> {"role": "system"} messages where they stand
//   tools [{name, description, input_schema}] -> OpenAI function tools
//                                             (defer_loading: true = declared, not rendered)
//   tool_choice auto|any|tool|none         -> ApiRequest::ToolChoice kAuto|kRequired|kNamed|kNone
//   metadata.user_id                       -> the session id (ApiRequest::user)
//   thinking, output_config.effort         -> the template's enable_thinking, where it has one
//   context_management.edits               -> executed on the messages (anthropic_context_edits.h)
//
// Text blocks of one message are concatenated as they are. Every field and
// block key is checked: anything unknown or not implemented (images,
// server tools, assistant prefill as the last message) is a 400 that names
// it; what is accepted without effect is listed in api.ignored_fields.
// `cache_control` breakpoints ({"type": "ephemeral", "ttl":
// "5m" | "1h"}, at most 4) are recorded as positions in the converted
// request; anthropic_cache_control.h turns them into prompt-token prefixes.
//
// Pure functions; thread-safe.
#pragma once

#include <cstddef>
#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <vector>

#include "server/common/api_error.h"
#include "server/common/request_limits.h"
#include "server/core/fit_to_context.h"
#include "server/core/request.h"

namespace pg {

// Where a cache_control breakpoint ends, in the converted request.
struct CacheBreakpoint {
  enum class Kind {
    kContent,        // api.messages[index].content, just before byte `offset` (the end of the block)
    kToolArguments,  // api.messages[index].tool_calls[call].function.arguments (a tool_use block)
    kTool,           // api.tools[index] (the declared tool)
  };
  Kind kind = Kind::kContent;
  size_t index = 0;
  size_t offset = 0;
  size_t call = 0;
  double ttl_s = 300;  // "5m" = 300, "1h" = 3600
};

inline constexpr int kMaxCacheBreakpoints = 4;  // Anthropic's limit per request

struct AnthropicRequest {
  ApiRequest api;                                          // chat = true; max_tokens_given = true (messages)
  std::vector<CacheBreakpoint> breakpoints;                // in request order: tools, system, messages
  nlohmann::json applied_edits = nlohmann::json::array();  // context_management edits executed
};

// POST /v1/messages. `n_ctx` (the model's context) no longer bounds max_tokens
// here: FitToContext refuses a max_tokens past it with the prompt's length.
// `thinking_switch`: the chat template reads enable_thinking
// (ChatPrompt::has_thinking_switch), which thinking / output_config.effort set.
ApiResult<AnthropicRequest> ParseAnthropicMessages(const nlohmann::ordered_json& body, int64_t n_ctx,
                                                   const RequestLimits& limits = {}, bool thinking_switch = false);
// POST /v1/messages/count_tokens: {model, messages, system?, tools?, tool_choice?, thinking?, ...}.
ApiResult<AnthropicRequest> ParseAnthropicCountTokens(const nlohmann::ordered_json& body,
                                                      const RequestLimits& limits = {}, bool thinking_switch = false);

// Internal to the two parsers (anthropic_content.cc): system, messages,
// tools and tool_choice into `out`. Returns the first problem.
std::optional<ApiError> ConvertAnthropicConversation(const nlohmann::ordered_json& body, const RequestLimits& limits,
                                                     AnthropicRequest* out);

}  // namespace pg
