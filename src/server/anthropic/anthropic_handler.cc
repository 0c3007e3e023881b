#include "server/anthropic/anthropic_handler.h"

#include <algorithm>
#include <iterator>
#include <memory>
#include <vector>

#include "base/log.h"
#include "server/anthropic/anthropic_cache_control.h"
#include "server/anthropic/anthropic_request.h"
#include "server/anthropic/anthropic_writer.h"
#include "server/common/api_error.h"
#include "server/common/request_limits.h"
#include "server/core/fit_to_context.h"
#include "server/core/generation_handler.h"
#include "server/core/generation_pipeline.h"
#include "server/core/ignored_fields.h"
#include "server/core/json_body.h"
#include "server/core/json_text.h"
#include "server/core/request.h"
#include "server/core/response_id.h"
#include "server/http/guarded_stream.h"
#include "tokenizer/tokenizer.h"

namespace pg {
namespace {

// anthropic-beta values this server understands: each names behaviour it
// implements or accepts (docs/server.md, "Anthropic betas"). Others are
// named in the ignored-fields header.
constexpr const char* kKnownBetas[] = {"claude-code-20250219",
                                       "interleaved-thinking-2025-05-14",
                                       "context-management-2025-06-27",
                                       "effort-2025-11-24",
                                       "advanced-tool-use-2025-11-20",
                                       "prompt-caching-2024-07-31",
                                       "extended-cache-ttl-2025-04-11",
                                       "token-counting-2024-11-01",
                                       "fine-grained-tool-streaming-2025-05-14",
                                       "mid-conversation-tool-changes-2026-07-01",
                                       "per-turn-control-2026-07-01",
                                       "thinking-token-count-2026-05-13"};

// Names what this request carried without effect (fields, unknown betas)
// and the context edits executed, in response headers and the log.
void ReportAnthropicExtensions(const httplib::Request& req, const ApiRequest& api, const nlohmann::json& applied_edits,
                               const std::string& id, httplib::Response& res) {
  std::vector<std::string> ignored = api.ignored_fields;
  std::string betas = req.get_header_value("anthropic-beta");
  for (size_t start = 0; start < betas.size();) {
    size_t end = betas.find(',', start);
    if (end == std::string::npos) end = betas.size();
    std::string beta = betas.substr(start, end - start);
    beta.erase(0, beta.find_first_not_of(' '));
    beta.erase(beta.find_last_not_of(' ') + 1);
    if (!beta.empty() && std::find(std::begin(kKnownBetas), std::end(kKnownBetas), beta) == std::end(kKnownBetas)) {
      ignored.push_back("anthropic-beta:" + beta);
    }
    start = end + 1;
  }
  ReportIgnoredFields(id, ignored, res);
  if (!applied_edits.empty()) {
    res.set_header("x-prosgrow-context-edits", DumpJson(applied_edits));
    PG_LOG_INFO("{}: context_management applied: {}", id, DumpJson(applied_edits));
  }
}

// Anthropic's Messages API as an ApiDialect. Parse keeps the request's
// cache_control breakpoints; Prompt finds their prompt prefixes, which
// become KV hints and, in the writer, the usage's cache split.
class AnthropicDialect final : public ApiDialect {
 public:
  explicit AnthropicDialect(const HandlerContext& ctx) : ctx_(ctx) {}
  const char* endpoint() const override { return "messages"; }
  void SendError(httplib::Response& res, const ApiError& error, ServerMetrics* metrics) const override {
    SendAnthropicError(res, error, metrics);
  }
  ContextWording context_wording() const override { return AnthropicContextError; }
  std::optional<ApiError> CheckHeaders(const httplib::Request& req) const override {
    return CheckAnthropicVersion(req);
  }

  ApiResult<ApiRequest> Parse(const nlohmann::ordered_json& body, const ServiceInfo& info,
                              const RequestLimits& limits) override {
    ApiResult<AnthropicRequest> parsed =
        ParseAnthropicMessages(body, info.n_ctx, limits, ctx_.chat()->has_thinking_switch());
    if (!parsed.ok()) return parsed.error;
    breakpoints_ = std::move(parsed.value.breakpoints);
    applied_edits_ = std::move(parsed.value.applied_edits);
    return std::move(parsed.value.api);
  }

  ApiResult<std::vector<int32_t>> Prompt(const HandlerContext& ctx, ApiRequest* api) override {
    Result<std::string> rendered = ctx.chat()->Render(api->messages, api->tools, api->template_kwargs);
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

  void BeforeStart(const httplib::Request& req, const ApiRequest& api, const std::string& id,
                   httplib::Response& res) override {
    ReportAnthropicExtensions(req, api, applied_edits_, id, res);
  }

 private:
  const HandlerContext& ctx_;
  nlohmann::json applied_edits_ = nlohmann::json::array();
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
  return BadRequest("anthropic-version '" + v +
                        "' is not a supported version; send a date such as 2023-06-01 (or "
                        "omit the header)",
                    "anthropic-version");
}

void AnthropicHandler::Messages(const httplib::Request& req, httplib::Response& res) const {
  AnthropicDialect dialect(ctx_);
  HandleGeneration(ctx_, req, res, dialect);
}

void AnthropicHandler::CountTokens(const httplib::Request& req, httplib::Response& res) const {
  if (std::optional<ApiError> e = Precheck(ctx_, req)) return SendAnthropicError(res, *e, ctx_.metrics);
  ApiResult<nlohmann::ordered_json> body = ParseJsonBody(req.body, ctx_.limits.max_json_depth);
  if (!body.ok()) return SendAnthropicError(res, body.error, ctx_.metrics);
  ApiResult<AnthropicRequest> parsed =
      ParseAnthropicCountTokens(body.value, ctx_.limits, ctx_.chat()->has_thinking_switch());
  if (!parsed.ok()) return SendAnthropicError(res, parsed.error, ctx_.metrics);
  const ApiRequest& api = parsed.value.api;
  if (std::optional<ApiError> e = CheckModelName(api.model, ctx_.service->info())) {
    return SendAnthropicError(res, *e, ctx_.metrics);
  }
  Result<std::string> rendered = ctx_.chat()->Render(api.messages, api.tools, api.template_kwargs);
  if (!rendered.ok()) return SendAnthropicError(res, BadRequest(rendered.status().message()), ctx_.metrics);
  std::vector<int32_t> prompt = EncodeChatText(ctx_.service->tokenizer(), *rendered);
  res.status = 200;
  res.set_content(DumpJson({{"input_tokens", prompt.size()}}), "application/json");
}

}  // namespace pg
