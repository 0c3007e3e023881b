#include "server/anthropic_handler.h"

#include <memory>
#include <vector>

#include "server/anthropic_cache_control.h"
#include "server/anthropic_request.h"
#include "server/anthropic_writer.h"
#include "server/generation_handler.h"
#include "server/generation_pipeline.h"
#include "server/guarded_stream.h"
#include "server/openai_response.h"
#include "tokenizer/tokenizer.h"

namespace pg {
namespace {

// Anthropic's Messages API as an ApiDialect. Parse keeps the request's
// cache_control breakpoints; Prompt finds their prompt prefixes, which
// become KV hints and, in the writer, the usage's cache split.
class AnthropicDialect final : public ApiDialect {
 public:
  const char* endpoint() const override { return "messages"; }
  void SendError(httplib::Response& res, const ApiError& error, ServerMetrics* metrics) const override {
    SendAnthropicError(res, error, metrics);
  }
  ContextWords context_words() const override { return ContextWords::kAnthropic; }
  std::optional<ApiError> CheckHeaders(const httplib::Request& req) const override {
    return CheckAnthropicVersion(req);
  }

  ApiResult<ApiRequest> Parse(const nlohmann::ordered_json& body, const ServiceInfo& info,
                              const RequestLimits& limits) override {
    ApiResult<AnthropicRequest> parsed = ParseAnthropicMessages(body, info.n_ctx, limits);
    if (!parsed.ok()) return parsed.error;
    breakpoints_ = std::move(parsed.value.breakpoints);
    return std::move(parsed.value.api);
  }

  ApiResult<std::vector<int32_t>> Prompt(const HandlerContext& ctx, ApiRequest* api) override {
    Result<std::string> rendered = ctx.chat()->Render(api->messages, api->tools);
    if (!rendered.ok()) return BadRequest(rendered.status().message());
    const Tokenizer& tok = ctx.service->tokenizer();
    std::vector<int32_t> prompt = EncodeChatText(tok, *rendered);
    prefixes_ = BreakpointPrefixes(*ctx.chat(), tok, *api, breakpoints_, *rendered, prompt);
    for (const KvHint& h : CacheHints(prefixes_)) api->kv_hints.push_back(h);
    return prompt;
  }

  std::unique_ptr<ResponseWriter> Writer(const ApiRequest&, const ServiceInfo& info, const Tokenizer&) override {
    return std::make_unique<AnthropicWriter>(MessageHeader{NewResponseId("msg_"), info.model_name},
                                             std::move(prefixes_));
  }

 private:
  std::vector<CacheBreakpoint> breakpoints_;
  std::vector<BreakpointPrefix> prefixes_;
};

// count_tokens' steps before the body: readiness, version.
std::optional<ApiError> Precheck(const HandlerContext& ctx, const httplib::Request& req) {
  if (GuardedStream* conn = GuardedStream::Current()) conn->BeginHandling();
  if (!ctx.service->ready()) return ServiceUnavailable("the model is still loading");
  return CheckAnthropicVersion(req);
}

}  // namespace

std::optional<ApiError> CheckAnthropicVersion(const httplib::Request& req) {
  if (!req.has_header("anthropic-version")) return std::nullopt;
  // A date, YYYY-MM-DD, from 2023-01-01 on: the shape served is 2023-06-01's,
  // which later versions (SDKs send their own date) keep.
  const std::string v = req.get_header_value("anthropic-version");
  bool date = v.size() == 10 && v[4] == '-' && v[7] == '-';
  for (size_t i = 0; date && i < v.size(); ++i) date = i == 4 || i == 7 || (v[i] >= '0' && v[i] <= '9');
  if (date && v >= "2023-01-01" && v.substr(5, 2) >= "01" && v.substr(5, 2) <= "12" && v.substr(8) >= "01" &&
      v.substr(8) <= "31") {
    return std::nullopt;
  }
  return BadRequest("anthropic-version '" + v + "' is not a supported version; send a date such as 2023-06-01 (or "
                    "omit the header)",
                    "anthropic-version");
}

void AnthropicHandler::Messages(const httplib::Request& req, httplib::Response& res) const {
  AnthropicDialect dialect;
  HandleGeneration(ctx_, req, res, dialect);
}

void AnthropicHandler::CountTokens(const httplib::Request& req, httplib::Response& res) const {
  if (std::optional<ApiError> e = Precheck(ctx_, req)) return SendAnthropicError(res, *e, ctx_.metrics);
  ApiResult<nlohmann::ordered_json> body = ParseJsonBody(req.body, ctx_.limits.max_json_depth);
  if (!body.ok()) return SendAnthropicError(res, body.error, ctx_.metrics);
  ApiResult<AnthropicRequest> parsed = ParseAnthropicCountTokens(body.value, ctx_.limits);
  if (!parsed.ok()) return SendAnthropicError(res, parsed.error, ctx_.metrics);
  const ApiRequest& api = parsed.value.api;
  if (std::optional<ApiError> e = CheckModelName(api.model, ctx_.service->info())) {
    return SendAnthropicError(res, *e, ctx_.metrics);
  }
  ApiResult<std::vector<int32_t>> prompt = ChatPromptTokens(ctx_, api.messages, api.tools);
  if (!prompt.ok()) return SendAnthropicError(res, prompt.error, ctx_.metrics);
  res.status = 200;
  res.set_content(DumpJson({{"input_tokens", prompt.value.size()}}), "application/json");
}

}  // namespace pg
