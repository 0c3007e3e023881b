#include "server/anthropic/anthropic_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "server/common/api_error.h"
#include "server/common/request_limits.h"
#include "server/core/json_string_at.h"
#include "server/core/known_keys.h"
#include "server/core/request.h"
#include "server/core/request_fields.h"

namespace pg {
namespace {

using json = nlohmann::ordered_json;

// The top-level fields each endpoint reads; any other is a 400 naming it.
constexpr const char* kMessagesFields[] = {
    "model",     "messages", "max_tokens", "system", "tools",    "tool_choice",  "stop_sequences",     "temperature",
    "top_p",     "top_k",    "metadata",   "stream", "thinking", "service_tier", "context_management", "output_config",
    "cache_salt"};  // cache_salt: prosgrow/vLLM, salts the KV cache
constexpr const char* kCountTokensFields[] = {"model",    "messages",           "system",       "tools", "tool_choice",
                                              "thinking", "context_management", "output_config"};

template <size_t N>
std::optional<ApiError> RefuseUnknownFields(const json& body, const char* const (&known)[N]) {
  std::string unknown;
  for (auto it = body.begin(); it != body.end(); ++it) {
    if (std::find_if(std::begin(known), std::end(known), [&](const char* k) { return it.key() == k; }) ==
        std::end(known)) {
      unknown += (unknown.empty() ? "'" : ", '") + it.key() + "'";
    }
  }
  if (unknown.empty()) return std::nullopt;
  return BadRequest("unknown or unsupported field(s): " + unknown + " (see docs/server.md, Anthropic Messages API)", "",
                    "unsupported_parameter");
}

// thinking: {"type": "enabled" | "adaptive" | "disabled", "budget_tokens",
// "display"} -> the template's thinking switch (enable_thinking) where it has
// one; without one, a request for thinking is answered without thinking
// blocks and named in ignored_fields. Absent = the template's default.
void ReadThinking(FieldReader& r, bool thinking_switch, ApiRequest* api) {
  const json* t = r.Get("thinking");
  if (!t) return;
  const std::string type =
      t->is_object() && t->contains("type") && (*t)["type"].is_string() ? (*t)["type"].get<std::string>() : "";
  if (type != "enabled" && type != "adaptive" && type != "disabled") {
    return r.Fail(BadRequest("thinking.type: must be \"enabled\", \"adaptive\" or \"disabled\"", "thinking.type"));
  }
  if (auto e = UnknownKey(*t, {"type", "budget_tokens", "display"}, "thinking")) return r.Fail(*e);
  for (auto it = t->begin(); it != t->end(); ++it) {
    // Checked even where they have no effect (ignored_fields), as Anthropic does.
    const bool ok =
        it->is_null() || (it.key() == "type") ||
        (it.key() == "budget_tokens" ? it->is_number_integer() && it->get<int64_t>() >= 1 : it->is_string());
    if (!ok) {
      return r.Fail(BadRequest(fmt::format("thinking.{}: must be {}, got {}", it.key(),
                                           it.key() == "budget_tokens" ? "a positive integer" : "a string",
                                           it->is_number() ? it->dump() : JsonTypeName(*it)),
                               "thinking." + it.key(), "invalid_type"));
    }
  }
  const bool on = type != "disabled";
  if (thinking_switch) {
    api->template_kwargs = {{"enable_thinking", on}};
  } else if (on) {
    api->ignored_fields.push_back("thinking");  // no switch: answered without thinking blocks
  }
  if (on && t->contains("budget_tokens")) api->ignored_fields.push_back("thinking.budget_tokens");
  if (on && t->contains("display")) api->ignored_fields.push_back("thinking.display");
}

// output_config.format: {"type": "json_schema", "schema": {...}}, the
// structured output: the text answer is one JSON value valid under the
// schema (server/core/output_constraint_request.h), as OpenAI's json_schema.
void ReadOutputFormat(FieldReader& r, const json& f, ApiRequest* api) {
  if (f.is_null()) return;
  if (!f.is_object()) return (void)r.WrongType("output_config.format", "an object", f);
  if (auto e = UnknownKey(f, {"type", "schema"}, "output_config.format")) return r.Fail(*e);
  if (StringAt(f, "type") != "json_schema") {
    return r.Fail(BadRequest("output_config.format.type: must be \"json_schema\"", "output_config.format.type"));
  }
  auto schema = f.find("schema");
  if (schema == f.end() || !(schema->is_object() || schema->is_boolean())) {
    return r.Fail(
        BadRequest("output_config.format.schema: a JSON schema object is required", "output_config.format.schema"));
  }
  api->SetJsonSchemaFormat(*schema, "output_config.format", "output_config.format.schema");
}

// output_config: {"effort": "low" | "medium" | "high" | "xhigh" | "max",
// "format": ...}. Where the template has a thinking switch and `thinking`
// is not sent, low turns it off and the others on; otherwise effort has no
// effect (ignored_fields).
void ReadOutputConfig(FieldReader& r, bool thinking_switch, ApiRequest* api) {
  const json* oc = r.GetObject("output_config");
  if (!oc) return;
  if (auto e = UnknownKey(*oc, {"effort", "format"}, "output_config")) return r.Fail(*e);
  if (oc->contains("format")) ReadOutputFormat(r, (*oc)["format"], api);
  if (!oc->contains("effort") || (*oc)["effort"].is_null()) return;
  const json& e = (*oc)["effort"];
  if (e != "low" && e != "medium" && e != "high" && e != "xhigh" && e != "max") {
    return r.Fail(BadRequest("output_config.effort: must be low, medium, high, xhigh or max", "output_config.effort"));
  }
  if (thinking_switch && !r.Get("thinking")) {
    api->template_kwargs = {{"enable_thinking", e != "low"}};
  } else {
    api->ignored_fields.push_back("output_config.effort");
  }
}

void ReadSampling(FieldReader& r, ApiRequest* req) {
  SamplingParams& s = req->sampling;
  int64_t max_tokens = 0;
  if (!r.Get("max_tokens")) {
    r.Fail(BadRequest("'max_tokens' is required", "max_tokens"));
  } else if (r.Int("max_tokens", &max_tokens)) {
    // Past the context is left to FitToContext, which answers in Anthropic's
    // words with the prompt's length (clients lower max_tokens from them).
    if (max_tokens < 1) {
      r.Fail(BadRequest(fmt::format("'max_tokens' must be at least 1, got {}", max_tokens), "max_tokens"));
    }
    s.max_tokens = static_cast<int>(std::clamp<int64_t>(max_tokens, 1, 1 << 30));
    req->max_tokens_given = true;
  }
  double d = 0;
  if (r.Number("temperature", &d)) {
    if (!(d >= 0 && d <= 1))
      r.Fail(BadRequest(fmt::format("'temperature' must be in [0, 1], got {}", d), "temperature"));
    s.temperature = static_cast<float>(d);
  }
  if (r.Number("top_p", &d)) {
    if (!(d > 0 && d <= 1)) r.Fail(BadRequest(fmt::format("'top_p' must be in (0, 1], got {}", d), "top_p"));
    s.top_p = static_cast<float>(d);
  }
  int64_t k = 0;
  if (r.Int("top_k", &k)) {
    if (k < 0 || k > (1 << 30)) r.Fail(BadRequest(fmt::format("'top_k' must be >= 0, got {}", k), "top_k"));
    s.top_k = static_cast<int>(std::clamp<int64_t>(k, 0, 1 << 30));
  }
}

void ReadStopSequences(FieldReader& r, const RequestLimits& limits, ApiRequest* req) {
  const json* stop = r.GetSized({"stop_sequences", false, "an array of strings", "strings", limits.max_stop,
                                 "--max-stop", "too_many_stop_strings"});
  if (!stop) return;
  for (const json& s : *stop) {
    if (!s.is_string()) {
      r.WrongType("stop_sequences", "an array of strings", s);
      return;
    }
    if (s.get<std::string>().empty()) {
      r.Fail(BadRequest("'stop_sequences' strings must not be empty", "stop_sequences"));
      return;
    }
    req->stop.push_back(s.get<std::string>());
  }
}

// metadata: {"user_id": string} -> the session id.
void ReadMetadata(FieldReader& r, ApiRequest* req) {
  const json* m = r.GetObject("metadata");
  if (!m) return;
  if (auto e = UnknownKey(*m, {"user_id"}, "metadata")) return r.Fail(*e);
  for (auto it = m->begin(); it != m->end(); ++it) {
    if (it->is_null()) continue;
    if (!it->is_string() || it->get<std::string>().size() > 256) {
      r.Fail(BadRequest("metadata.user_id: must be a string of at most 256 characters", "metadata.user_id"));
      return;
    }
    req->user = it->get<std::string>();
  }
}

// service_tier: one tier is served; "auto" and "standard_only" both mean it.
void ReadServiceTier(FieldReader& r) {
  std::string tier;
  if (r.String("service_tier", &tier) && tier != "auto" && tier != "standard_only") {
    r.Fail(BadRequest(fmt::format("'service_tier' must be \"auto\" or \"standard_only\", got \"{}\"", tier),
                      "service_tier"));
  }
}

}  // namespace

ApiResult<AnthropicRequest> ParseAnthropicMessages(const json& body, int64_t /*n_ctx*/, const RequestLimits& limits,
                                                   bool thinking_switch) {
  if (std::optional<ApiError> e = RefuseUnknownFields(body, kMessagesFields)) return *e;
  FieldReader r(body);
  AnthropicRequest out;
  ApiRequest& api = out.api;
  if (!r.Get("model")) r.Fail(BadRequest("'model' is required", "model"));
  r.String("model", &api.model);
  ReadSampling(r, &api);
  ReadStopSequences(r, limits, &api);
  ReadMetadata(r, &api);
  ReadThinking(r, thinking_switch, &api);
  ReadOutputConfig(r, thinking_switch, &api);
  ReadServiceTier(r);
  ReadCacheSalt(r, &api);
  r.Bool("stream", &api.stream);
  if (r.failed()) return r.error();
  if (std::optional<ApiError> e = ConvertAnthropicConversation(body, limits, &out)) return *e;
  return out;
}

ApiResult<AnthropicRequest> ParseAnthropicCountTokens(const json& body, const RequestLimits& limits,
                                                      bool thinking_switch) {
  if (std::optional<ApiError> e = RefuseUnknownFields(body, kCountTokensFields)) return *e;
  FieldReader r(body);
  AnthropicRequest out;
  if (!r.Get("model")) r.Fail(BadRequest("'model' is required", "model"));
  r.String("model", &out.api.model);
  ReadThinking(r, thinking_switch, &out.api);
  ReadOutputConfig(r, thinking_switch, &out.api);
  if (r.failed()) return r.error();
  if (std::optional<ApiError> e = ConvertAnthropicConversation(body, limits, &out)) return *e;
  return out;
}

}  // namespace pg
