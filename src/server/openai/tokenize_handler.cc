#include "server/openai/tokenize_handler.h"

#include "server/common/api_error.h"
#include "server/common/tenant.h"
#include "server/core/generation_pipeline.h"
#include "server/core/json_body.h"
#include "server/core/json_text.h"
#include "server/core/request.h"
#include "server/openai/openai_request.h"
#include "server/openai/openai_response.h"
#include "tokenizer/tokenizer.h"

namespace pg {
namespace {

using json = nlohmann::ordered_json;

// *cache_salt: the request's cache_salt field (chat and completion bodies).
ApiResult<std::vector<int32_t>> Tokens(const HandlerContext& ctx, const json& body, std::string* cache_salt) {
  const ServiceInfo& info = ctx.service->info();
  const Tokenizer& tok = ctx.service->tokenizer();
  if (body.contains("messages")) {
    ApiResult<ApiRequest> api = ParseChatRequest(body, info.n_vocab, info.n_ctx, ctx.limits);
    if (!api.ok()) return api.error;
    *cache_salt = api.value.cache_salt;
    return ChatPromptTokens(ctx, api.value.messages, api.value.tools, "messages", api.value.template_kwargs);
  }
  if (body.contains("prompt")) {
    ApiResult<ApiRequest> api = ParseCompletionRequest(body, info.n_vocab, info.n_ctx, ctx.limits);
    if (!api.ok()) return api.error;
    *cache_salt = api.value.cache_salt;
    if (api.value.prompt_is_tokens) return std::move(api.value.prompt_tokens);
    return tok.Encode(api.value.prompt_text, /*add_special=*/true, /*parse_special=*/true);
  }
  auto content = body.find("content");
  if (content == body.end()) return BadRequest("send 'messages', 'prompt' or 'content'", "messages");
  if (!content->is_string()) return BadRequest("'content' must be a string", "content");
  bool add_special = false;
  if (auto it = body.find("add_special"); it != body.end()) {
    if (!it->is_boolean()) return BadRequest("'add_special' must be a boolean", "add_special");
    add_special = it->get<bool>();
  }
  for (const auto& [key, value] : body.items()) {
    if (key != "content" && key != "add_special" && key != "model")
      return BadRequest("unknown field '" + key + "' for /tokenize with 'content'", key);
  }
  return tok.Encode(content->get<std::string>(), add_special, /*parse_special=*/true);
}

}  // namespace

void HandleTokenize(const HandlerContext& ctx, const httplib::Request& req, httplib::Response& res) {
  ApiResult<json> body = ParseJsonBody(req.body, ctx.limits.max_json_depth);
  if (!body.ok()) return SendOpenAiError(res, body.error, ctx.metrics);
  std::string cache_salt;
  ApiResult<std::vector<int32_t>> tokens = Tokens(ctx, body.value, &cache_salt);
  if (!tokens.ok()) return SendOpenAiError(res, tokens.error, ctx.metrics);
  // The caller's own block names (its tenant's salt): what a router matches
  // against this replica's KV events when they carry no token ids.
  const std::string salt = TenantCacheSalt(Tenant::Current(), cache_salt);
  nlohmann::json out = {{"tokens", tokens.value},
                        {"count", tokens.value.size()},
                        {"max_model_len", ctx.service->info().n_ctx},
                        {"block_hashes", ctx.service->PromptBlockHashes(tokens.value, salt)}};
  res.set_content(DumpJson(out), "application/json");
}

}  // namespace pg
