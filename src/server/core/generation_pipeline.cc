#include "server/core/generation_pipeline.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/log.h"
#include "server/common/api_error.h"
#include "server/common/request_limits.h"
#include "server/common/tenant.h"
#include "server/core/output_constraint_request.h"
#include "server/core/request.h"
#include "server/http/guarded_stream.h"
#include "tokenizer/tokenizer.h"

namespace pg {

std::optional<ApiError> CheckModelName(const std::string& requested, const ServiceInfo& info) {
  if (requested.empty() || requested == info.model_name) return std::nullopt;
  return NotFoundError("model '" + requested + "' does not exist; this server serves '" + info.model_name + "'",
                       "model_not_found");
}

ApiResult<std::vector<int32_t>> ChatPromptTokens(const HandlerContext& ctx, const nlohmann::ordered_json& messages,
                                                 const nlohmann::ordered_json& tools, const std::string& param,
                                                 const nlohmann::ordered_json& template_kwargs) {
  Result<std::string> text = ctx.chat()->Render(messages, tools, /*add_generation_prompt=*/true, template_kwargs);
  if (!text.ok()) return BadRequest(text.status().message(), param);
  return EncodeChatText(ctx.service->tokenizer(), *text);
}

void ApplySamplingDefaults(const SamplingDefaults& d, const nlohmann::ordered_json& body, SamplingParams* s) {
  auto unset = [&](const char* k) { return !body.contains(k) || body[k].is_null(); };
  if (d.temperature && unset("temperature")) s->temperature = static_cast<float>(*d.temperature);
  if (d.top_p && unset("top_p")) s->top_p = static_cast<float>(*d.top_p);
  if (d.top_k && unset("top_k")) s->top_k = *d.top_k <= 0 ? 0 : static_cast<int>(*d.top_k);
  if (d.min_p && unset("min_p")) s->min_p = static_cast<float>(*d.min_p);
  if (d.repetition_penalty && unset("repetition_penalty"))
    s->repetition_penalty = static_cast<float>(*d.repetition_penalty);
}

void ApplyDefaultMaxTokens(const RequestLimits& limits, ApiRequest* api) {
  if (api->max_tokens_given || limits.default_max_tokens <= 0) return;
  api->sampling.max_tokens = std::min(api->sampling.max_tokens, limits.default_max_tokens);
}

std::vector<int32_t> ToolMarkerTokens(ToolCallFormat format, const Tokenizer& tok) {
  std::vector<int32_t> ids;
  for (std::string_view marker : ToolCallMarkers(format)) {
    std::optional<int32_t> id = tok.FindToken(marker);
    if (id && tok.IsControl(*id)) ids.push_back(*id);
  }
  return ids;
}

ApiResult<std::unique_ptr<GenerationRunner>> StartGeneration(const HandlerContext& ctx, ApiRequest* api,
                                                             std::vector<int32_t> prompt,
                                                             const GenerationStart& start) {
  // Output constraints (response_format json, tool_choice required/named,
  // strict tools) for both APIs: compiled and cached for this tokenizer.
  ApiResult<std::shared_ptr<const CompiledConstraint>> constraint =
      BuildOutputConstraint(*api, ctx.service->tokenizer(), ctx.service->info().chat_template);
  if (!constraint.ok()) return constraint.error;
  if (api->user.size() > kMaxSessionIdBytes) {
    return BadRequest(fmt::format("'user' is longer than {} bytes (a session id)", kMaxSessionIdBytes), "user");
  }
  const ServiceInfo& info = ctx.service->info();
  if (api->cache_ttl_s >= 0 && !info.honours_cache_ttl) {
    return BadRequest("'cache_ttl_s' needs session retention (serve --policy optimized); this server does not keep it",
                      "cache_ttl_s");
  }
  GenerationRequest g;
  g.id = start.id;
  g.cache_salt = TenantCacheSalt(Tenant::Current(), api->cache_salt);
  g.prompt = std::move(prompt);
  g.sampling = api->sampling;
  g.session_id = start.session_id;
  g.cache_ttl_s = api->cache_ttl_s;
  g.kv_hints = api->kv_hints;
  g.arrival_s = start.arrival_s;
  g.constraint = std::move(constraint.value);
  auto runner =
      std::make_unique<GenerationRunner>(ctx.service, std::move(g), std::move(api->stop), ctx.metrics->generation());
  if (!start.render_special.empty()) runner->RenderSpecialTokens(start.render_special);
  if (Status st = runner->Start(); !st.ok()) return FromStatus(st);
  return runner;
}

std::string SessionIdOf(const httplib::Request& req, const ApiRequest& api) {
  const std::string& raw = req.has_header("X-Session-Id") ? req.get_header_value("X-Session-Id") : api.user;
  return TenantSessionId(Tenant::Current(), raw);
}

bool CollectAll(const HandlerContext& ctx, GenerationRunner* runner, const char* endpoint, std::string* text,
                std::vector<TokenEvent>* tokens) {
  GenerationStep step;
  GuardedStream* conn = GuardedStream::Current();
  for (;;) {
    bool finished = runner->Poll(kPollSeconds, &step);
    *text += step.text;
    tokens->insert(tokens->end(), step.tokens.begin(), step.tokens.end());
    step.Clear();
    if (finished) return true;
    if (ctx.stopping->load() || (conn && conn->PeerClosed())) {
      runner->Cancel();
      ctx.metrics->client_disconnects->Inc({endpoint});
      return false;
    }
  }
}

std::optional<ApiError> EngineFailure(const GenerationResult& r) {
  if (r.finish_reason == "error") return ServerError("generation failed: " + r.error);
  if (r.finish_reason == "cancelled") return ServiceUnavailable("the request was cancelled by the server");
  return std::nullopt;
}

}  // namespace pg
