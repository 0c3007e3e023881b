// ResponsesRequest: a validated POST /v1/responses body (OpenAI's Responses
// API, the subset Codex CLI and the openai SDK's responses.create/stream
// send), translated at the edge into the internal chat ApiRequest the
// OpenAI and Anthropic paths share:
//
//   instructions (string)                    -> a leading {"role": "system"} message
//   input: string                            -> one user message
//   input: [items]
//     {type: "message", role, content}       -> a chat message; role "developer" -> "system";
//                                               content a string or input_text / output_text parts
//     {type: "function_call", call_id, name, arguments}
//                                            -> tool_calls of an assistant message (consecutive
//                                               calls, and a preceding assistant message, share one)
//     {type: "function_call_output", call_id, output}
//                                            -> {"role": "tool", "tool_call_id", "content"}
//     {type: "reasoning", summary, content}  -> reasoning_content of the next assistant message
//                                               (templates that replay reasoning read it)
//   tools [{type: "function", name, description, parameters, strict}]
//                                            -> chat function tools
//   tools [{type: "web_search" | "image_generation" | ... (hosted_tools.h)}]
//                                            -> not offered to the model: named in api.skipped_tools
//                                               and left out of the response's tools; a tool_choice
//                                               forcing one is a 400
//   tools [{type: "namespace", name, tools: [function tools]}]
//                                            -> its function tools by their own names; a call to one
//                                               carries "namespace" in its output item
//   tool_choice, parallel_tool_calls, max_output_tokens, temperature, top_p,
//   text.format (text | json_object | json_schema)   -> as on /v1/chat/completions
//   prompt_cache_key (else user, safety_identifier)   -> the session key for the KV tiers
//   reasoning.effort                         -> the template's thinking switch where it has one
//   previous_response_id                     -> resolved by the handler against ResponseStore
//
// Fields accepted without effect are listed in ApiRequest::ignored_fields;
// any field not known here is a 400 that names it. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>

#include "server/common/api_error.h"
#include "server/common/request_limits.h"
#include "server/core/request.h"

namespace pg {

struct ResponsesRequest {
  ApiRequest api;                    // chat; messages = instructions + this request's input only
  nlohmann::ordered_json input;      // this request's input, as chat messages (no instructions)
  std::string instructions;          // "" = none
  std::string previous_response_id;  // "" = none
  bool store = true;                 // the API's default
  nlohmann::ordered_json echo;       // request fields the response object repeats (tools, tool_choice, ...)
  nlohmann::json namespaces = nlohmann::json::object();  // function name -> its tool namespace (when in one)
};

// `n_ctx` bounds max_output_tokens; `thinking_switch` is whether the chat
// template reads enable_thinking (ChatPrompt::has_thinking_switch).
ApiResult<ResponsesRequest> ParseResponsesRequest(const nlohmann::ordered_json& body, int64_t n_ctx,
                                                  bool thinking_switch, const RequestLimits& limits = {});

// Converts Responses input items to chat messages (appended to *messages).
// `param` names the field in errors ("input").
std::optional<ApiError> ConvertResponsesInput(const nlohmann::ordered_json& input, nlohmann::ordered_json* messages);

}  // namespace pg
