#include "server/openai/openai_fields.h"

#include <fmt/format.h>

#include <cstring>
#include <string>

#include "server/common/api_error.h"

namespace pg {
namespace {

using json = nlohmann::ordered_json;

// Read on both routes: ReadCommonFields (request_fields.cc, kv_hints_request.cc)
// and ReadOutputFormat (response_format_request.cc).
constexpr const char* kCommonFields[] = {"model",
                                         "temperature",
                                         "top_p",
                                         "min_p",
                                         "presence_penalty",
                                         "frequency_penalty",
                                         "repetition_penalty",
                                         "top_k",
                                         "seed",
                                         "max_tokens",
                                         "max_completion_tokens",
                                         "n",
                                         "best_of",
                                         "ignore_eos",
                                         "stream",
                                         "stream_options",
                                         "stop",
                                         "user",
                                         "cache_ttl_s",
                                         "logit_bias",
                                         "kv_hints",
                                         "min_tokens",
                                         "stop_token_ids",
                                         "cache_salt",
                                         "json_schema",
                                         "guided_json",
                                         "response_format",
                                         "structured_outputs",
                                         "guided_choice"};
// Read by ParseChatRequest (chat_request.cc); functions / function_call are
// refused there with their own message.
constexpr const char* kChatFields[] = {
    "messages", "logprobs",  "top_logprobs",  "tool_choice",         "parallel_tool_calls",
    "tools",    "functions", "function_call", "chat_template_kwargs"};
// Read by ParseCompletionRequest (completion_request.cc).
constexpr const char* kCompletionFields[] = {"prompt", "logprobs", "echo", "suffix"};

// Refused by name: what each client meant, and what to send instead.
struct Refused {
  const char* key;
  const char* instead;
};
constexpr Refused kRefused[] = {
    {"guided_regex",
     "vLLM's guided_regex is not supported (no regular-expression constraints); use "
     "response_format json_schema with a \"pattern\" string schema"},
    {"guided_grammar", "vLLM's guided_grammar is not supported (no grammars); use response_format json_schema"},
    {"guided_decoding_backend", "vLLM's guided decoding options are not supported; use response_format"},
    {"guided_whitespace_pattern", "vLLM's guided decoding options are not supported; use response_format"},
    {"grammar", "llama.cpp's GBNF 'grammar' is not supported; use response_format json_schema, or tools"},
    {"audio", "audio output is not supported (text only)"},
    {"prediction", "predicted outputs are not supported"},
    {"web_search_options", "web search is not supported"},
};

bool In(const char* key, std::initializer_list<const char*> list) {
  for (const char* k : list)
    if (std::strcmp(k, key) == 0) return true;
  return false;
}

template <size_t N>
bool In(const std::string& key, const char* const (&list)[N]) {
  for (const char* k : list)
    if (key == k) return true;
  return false;
}

bool IsOneOf(const json& v, std::initializer_list<const char*> values) {
  if (!v.is_string()) return false;
  for (const char* s : values)
    if (v.get<std::string>() == s) return true;
  return false;
}

// The keys that official SDKs and agent clients (opencode, the openai SDK's
// typed params) send and that need no action here. True when `key` is one;
// r fails when its value is of the wrong type or asks for an action.
bool CheckNoActionField(FieldReader& r, const std::string& key, const json& v) {
  auto bad = [&](const std::string& why) {
    r.Fail(BadRequest(fmt::format("'{}' {}", key, why), key, "unsupported_parameter"));
    return true;
  };
  if (key == "store") {  // prosgrow keeps no completions
    if (!v.is_boolean()) return bad(fmt::format("must be a boolean, got {}", JsonTypeName(v)));
    if (v.get<bool>()) return bad("true asks the server to store the completion; prosgrow stores none (send false)");
    return true;
  }
  if (key == "metadata") {  // tags for stored completions; nothing is stored
    if (!v.is_object()) return bad(fmt::format("must be an object, got {}", JsonTypeName(v)));
    for (const auto& [k, value] : v.items())
      if (!value.is_string()) return bad(fmt::format("values must be strings ('{}' is {})", k, JsonTypeName(value)));
    return true;
  }
  if (key == "prompt_cache_key" || key == "safety_identifier") {  // prefix caching needs no key
    if (!v.is_string()) return bad(fmt::format("must be a string, got {}", JsonTypeName(v)));
    return true;
  }
  if (key == "reasoning_effort") {
    if (!IsOneOf(v, {"none", "minimal", "low", "medium", "high"}))
      return bad("must be one of \"none\", \"minimal\", \"low\", \"medium\", \"high\"");
    return true;
  }
  if (key == "service_tier") {
    if (!IsOneOf(v, {"auto", "default", "flex", "scale", "priority"}))
      return bad("must be one of \"auto\", \"default\", \"flex\", \"scale\", \"priority\"");
    return true;
  }
  if (key == "modalities") {
    if (!v.is_array() || v.size() != 1 || v[0] != "text") return bad("must be [\"text\"] (text output only)");
    return true;
  }
  return false;
}

}  // namespace

void CheckFieldNames(FieldReader& r, const json& body, OpenAiRoute route, std::initializer_list<const char*> also) {
  const bool chat = route == OpenAiRoute::kChat;
  for (auto it = body.begin(); it != body.end() && !r.failed(); ++it) {
    const std::string& key = it.key();
    if (In(key, kCommonFields) || (chat ? In(key, kChatFields) : In(key, kCompletionFields)) || In(key.c_str(), also)) {
      continue;
    }
    if (it->is_null()) continue;  // null counts as absent, as for every field (FieldReader)
    bool refused = false;
    for (const Refused& f : kRefused) {
      if (key != f.key) continue;
      r.Fail(BadRequest(fmt::format("'{}': {}", key, f.instead), key, "unsupported_parameter"));
      refused = true;
    }
    if (refused || (chat && CheckNoActionField(r, key, *it))) continue;
    r.Fail(BadRequest(fmt::format("unknown field '{}' (docs/server.md, \"Request fields\", lists what {} reads)", key,
                                  chat ? "/v1/chat/completions" : "/v1/completions"),
                      key, "unknown_parameter"));
  }
}

}  // namespace pg
