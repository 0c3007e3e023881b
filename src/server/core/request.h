// ApiRequest: the request every dialect's parser fills (OpenAI's chat and
// completions in openai/openai_request.h, Anthropic's Messages in
// anthropic/anthropic_request.h, the Responses API in
// responses/responses_request.h) and the shared generation path reads
// (core/generation_handler.h). A validated value: whatever a dialect's body
// said, in one shape. Plain value type.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "engine/inference_service.h"

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

// The first tool message of chat `messages` whose tool_call_id answers no
// earlier assistant tool call: its index and that id. nullopt when every one
// answers a call, or when some earlier call carries no id to match.
struct OrphanToolResult {
  size_t index;
  std::string tool_call_id;
};
std::optional<OrphanToolResult> FirstOrphanToolResult(const nlohmann::ordered_json& messages);

}  // namespace pg
