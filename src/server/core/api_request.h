// ApiRequest: a validated /v1/chat/completions or /v1/completions body.
//
// ParseChatRequest / ParseCompletionRequest check every field's type and
// range and return an OpenAI-style 400 (with `param`) for anything wrong;
// nothing throws. Every sampling field (temperature, top_p, top_k, min_p,
// presence/frequency/repetition penalties, logit_bias, seed) reaches
// SamplingParams; counts are bounded by RequestLimits. Pure functions;
// thread-safe.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/inference_service.h"
#include "server/core/api_error.h"
#include "server/core/request_limits.h"

namespace pg {

struct ApiRequest {
  bool chat = true;
  std::string model;  // as sent ("" = absent)

  // chat: messages normalised for the template (content parts joined into a
  // string, tool-call arguments parsed into objects); tools as sent or null.
  nlohmann::ordered_json messages;
  nlohmann::ordered_json tools;
  // tool_choice: kNone drops the tools before rendering; kRequired and
  // kNamed (tool_choice_name) force a call to an allowed tool.
  enum class ToolChoice { kAuto, kNone, kRequired, kNamed };
  ToolChoice tool_choice = ToolChoice::kAuto;
  std::string tool_choice_name;
  bool parallel_tool_calls = true;  // false: only the first parsed call is returned
  // response_format: kText (free), kJsonObject (any JSON object) or
  // kJsonSchema (a value valid under response_schema, json_schema.schema).
  // Enforced by constrained decoding (server/core/output_constraint_request.h).
  // kChoice: exactly one of response_choices (vLLM's structured_outputs choice).
  enum class ResponseFormat { kText, kJsonObject, kJsonSchema, kChoice };
  ResponseFormat response_format = ResponseFormat::kText;
  std::string response_schema_name;           // json_schema.name
  nlohmann::ordered_json response_schema;     // json_schema.schema (an object or a boolean)
  std::vector<std::string> response_choices;  // kChoice
  // Where the request put its JSON format or schema (the 'param' of their
  // 400s): "response_format.json_schema.schema", "json_schema", ...
  std::string response_schema_param = "response_format";
  // The output format and where it came from, as every dialect's reader sets them.
  void SetJsonObjectFormat(std::string param) {
    response_format = ResponseFormat::kJsonObject;
    response_schema_param = std::move(param);
  }
  void SetJsonSchemaFormat(nlohmann::ordered_json schema, std::string name, std::string param) {
    response_format = ResponseFormat::kJsonSchema;
    response_schema = std::move(schema);
    response_schema_name = std::move(name);
    response_schema_param = std::move(param);
  }
  void SetChoiceFormat(std::vector<std::string> choices, std::string param) {
    response_format = ResponseFormat::kChoice;
    response_choices = std::move(choices);
    response_schema_param = std::move(param);
  }

  // completions: either text or token ids.
  bool prompt_is_tokens = false;
  std::string prompt_text;
  std::vector<int32_t> prompt_tokens;

  SamplingParams sampling;  // max_tokens filled later if absent
  bool max_tokens_given = false;
  std::vector<std::string> stop;
  bool stream = false;
  bool include_usage = false;  // stream_options.include_usage
  std::string user;
  double cache_ttl_s = -1;
  std::string cache_salt;        // vLLM's cache_salt: salts the KV cache inside the tenant; "" = none
  std::vector<KvHint> kv_hints;  // KV retention hints (GenerationRequest::kv_hints)
  // Extra chat-template variables: the OpenAI routes' chat_template_kwargs,
  // or what the request's fields map onto (e.g. {"enable_thinking": false}
  // from Anthropic's `thinking`); an object, or null = none.
  nlohmann::ordered_json template_kwargs;
  // Fields accepted without effect on this server (named in the
  // x-prosgrow-ignored-fields response header and the log, never dropped silently).
  std::vector<std::string> ignored_fields;
  // Hosted tool declarations (server/core/hosted_tools.h) accepted and not offered
  // to the model, by type, one entry per declaration; counted on /metrics and
  // named in the request's log line.
  std::vector<std::string> skipped_tools;
};

// `n_vocab` bounds token ids in a token-array prompt; `n_ctx` bounds max_tokens.
// A key neither route reads is a 400 naming it (server/openai/openai_fields.h);
// `also_read`: keys the calling endpoint reads itself (/apply-template's
// add_generation_prompt).
ApiResult<ApiRequest> ParseChatRequest(const nlohmann::ordered_json& body, int64_t n_vocab, int64_t n_ctx,
                                       const RequestLimits& limits = {},
                                       std::initializer_list<const char*> also_read = {});
ApiResult<ApiRequest> ParseCompletionRequest(const nlohmann::ordered_json& body, int64_t n_vocab, int64_t n_ctx,
                                             const RequestLimits& limits = {});

// The first tool message of chat `messages` whose tool_call_id answers no
// earlier assistant tool call: its index and that id. nullopt when every one
// answers a call, or when some earlier call carries no id to match.
struct OrphanToolResult {
  size_t index;
  std::string tool_call_id;
};
std::optional<OrphanToolResult> FirstOrphanToolResult(const nlohmann::ordered_json& messages);

// Parses a request body: it must be valid UTF-8 and a JSON object nested no
// deeper than `max_depth` (checked while parsing, so nothing recurses on it).
ApiResult<nlohmann::ordered_json> ParseJsonBody(const std::string& body, int max_depth = kDefaultMaxJsonDepth);

// Checks prompt + max_tokens against the context (n_ctx) and against what the
// device KV tier can hold for one sequence (max_seq_tokens, ServiceInfo; 0 =
// no such bound), and sets max_tokens when absent to the room left under the
// smaller of the two. 400 with the token counts, and the bound broken, when
// the request cannot fit: such a request would otherwise fail in the engine.
// The words are the API's own, as clients parse them:
//   kOpenAi     code "context_length_exceeded" (the KV bound:
//               "kv_capacity_exceeded"), a message naming the counts;
//   kAnthropic  Anthropic's sentences, "prompt is too long: N tokens > M
//               maximum" and "input length and `max_tokens` exceed context
//               limit: N + M > L" (the KV bound's figures when it is the
//               smaller one).
enum class ContextWords { kOpenAi, kAnthropic };
std::optional<ApiError> FitToContext(ApiRequest* request, int64_t prompt_tokens, int64_t n_ctx,
                                     int64_t max_seq_tokens = 0, ContextWords words = ContextWords::kOpenAi);

}  // namespace pg
