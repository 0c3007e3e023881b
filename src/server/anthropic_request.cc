#include "server/anthropic_request.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "server/request_fields.h"

namespace pg {
namespace {

using json = nlohmann::ordered_json;

// The top-level fields each endpoint reads; any other is a 400 naming it.
constexpr const char* kMessagesFields[] = {"model",       "messages", "max_tokens", "system",      "tools",
                                           "tool_choice", "stop_sequences", "temperature", "top_p", "top_k",
                                           "metadata",    "stream",   "thinking",   "service_tier",
                                           "cache_salt"};  // cache_salt: prosgrow/vLLM, salts the KV cache
constexpr const char* kCountTokensFields[] = {"model", "messages", "system", "tools", "tool_choice", "thinking"};

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
  return BadRequest("unknown or unsupported field(s): " + unknown + " (see docs/server.md, Anthropic Messages API)",
                    "", "unsupported_parameter");
}

// thinking: only {"type": "disabled"} (what not sending it means).
void ReadThinking(FieldReader& r) {
  const json* t = r.Get("thinking");
  if (!t) return;
  if (t->is_object() && t->size() == 1 && t->contains("type") && (*t)["type"] == "disabled") return;
  r.Fail(BadRequest("'thinking' (extended thinking) is not supported by this server; omit it or send "
                    "{\"type\": \"disabled\"}",
                    "thinking", "unsupported_parameter"));
}

void ReadSampling(FieldReader& r, int64_t n_ctx, ApiRequest* req) {
  SamplingParams& s = req->sampling;
  int64_t max_tokens = 0;
  if (!r.Get("max_tokens")) {
    r.Fail(BadRequest("'max_tokens' is required", "max_tokens"));
  } else if (r.Int("max_tokens", &max_tokens)) {
    if (max_tokens < 1 || max_tokens > n_ctx) {
      r.Fail(BadRequest(fmt::format("'max_tokens' must be in [1, {}] (the model's context), got {}", n_ctx,
                                    max_tokens),
                        "max_tokens"));
    }
    s.max_tokens = static_cast<int>(std::clamp<int64_t>(max_tokens, 1, 1 << 30));
    req->max_tokens_given = true;
  }
  double d = 0;
  if (r.Number("temperature", &d)) {
    if (!(d >= 0 && d <= 1)) r.Fail(BadRequest(fmt::format("'temperature' must be in [0, 1], got {}", d), "temperature"));
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
  const json* stop = r.Get("stop_sequences");
  if (!stop) return;
  if (!stop->is_array()) {
    r.WrongType("stop_sequences", "an array of strings", *stop);
    return;
  }
  if (stop->size() > static_cast<size_t>(limits.max_stop)) {
    r.Fail(BadRequest(fmt::format("'stop_sequences' has {} strings, more than the limit of {} (--max-stop)",
                                  stop->size(), limits.max_stop),
                      "stop_sequences", "too_many_stop_strings"));
    return;
  }
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
  const json* m = r.Get("metadata");
  if (!m) return;
  if (!m->is_object()) {
    r.WrongType("metadata", "an object", *m);
    return;
  }
  for (auto it = m->begin(); it != m->end(); ++it) {
    if (it.key() != "user_id") {
      r.Fail(BadRequest(fmt::format("metadata.{}: unknown field (only user_id)", it.key()), "metadata." + it.key(),
                        "unsupported_parameter"));
      return;
    }
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

ApiResult<AnthropicRequest> ParseAnthropicMessages(const json& body, int64_t n_ctx, const RequestLimits& limits) {
  if (std::optional<ApiError> e = RefuseUnknownFields(body, kMessagesFields)) return *e;
  FieldReader r(body);
  AnthropicRequest out;
  ApiRequest& api = out.api;
  if (!r.Get("model")) r.Fail(BadRequest("'model' is required", "model"));
  r.String("model", &api.model);
  ReadSampling(r, n_ctx, &api);
  ReadStopSequences(r, limits, &api);
  ReadMetadata(r, &api);
  ReadThinking(r);
  ReadServiceTier(r);
  ReadCacheSalt(r, &api);
  r.Bool("stream", &api.stream);
  if (r.failed()) return r.error();
  if (std::optional<ApiError> e = ConvertAnthropicConversation(body, limits, &out)) return *e;
  return out;
}

ApiResult<AnthropicRequest> ParseAnthropicCountTokens(const json& body, const RequestLimits& limits) {
  if (std::optional<ApiError> e = RefuseUnknownFields(body, kCountTokensFields)) return *e;
  FieldReader r(body);
  AnthropicRequest out;
  if (!r.Get("model")) r.Fail(BadRequest("'model' is required", "model"));
  r.String("model", &out.api.model);
  ReadThinking(r);
  if (r.failed()) return r.error();
  if (std::optional<ApiError> e = ConvertAnthropicConversation(body, limits, &out)) return *e;
  return out;
}

}  // namespace pg
