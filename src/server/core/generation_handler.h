// The one path every generation request takes, whatever its API. An
// ApiDialect is one API's edges for one request: it reads the body into the
// internal ApiRequest on the way in, and makes the ResponseWriter that
// renders the answer on the way out. Between them everything is shared:
//
//   BeginHandling -> ready? -> dialect.CheckHeaders -> ParseJsonBody
//   -> dialect.Parse (-> ApiRequest) -> CheckModelName
//   -> dialect.Prompt (template or text -> tokens) -> FitToContext (in the
//      dialect's words) -> ApplyDefaultMaxTokens -> dialect.Writer
//   -> dialect.BeforeStart -> StartGeneration
//   -> the stream loop (StreamResponse) or CollectAll, through one
//      GenerationOutput (the model's tool-call parser) -> the writer.
//
// OpenAI's chat and completions dialects live in completion_handler.cc,
// Anthropic's Messages in anthropic_handler.cc.
//
// Thread-safety: HandleGeneration runs concurrently on HTTP threads; a
// dialect object serves one request.
#pragma once

#include <httplib.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "server/common/api_error.h"
#include "server/common/request_limits.h"
#include "server/core/fit_to_context.h"
#include "server/core/handler_context.h"
#include "server/core/json_body.h"
#include "server/core/request.h"
#include "server/core/response_writer.h"

namespace pg {

class ApiDialect {
 public:
  virtual ~ApiDialect() = default;

  // Label of this API's client_disconnects count ("chat", "completions", "messages").
  virtual const char* endpoint() const = 0;
  // Writes an error in this API's shape and counts it.
  virtual void SendError(httplib::Response& res, const ApiError& error, ServerMetrics* metrics) const = 0;
  // How FitToContext words a request that does not fit (null: the server's
  // own words, ContextOverflowError).
  virtual ContextWording context_wording() const { return nullptr; }

  // Headers this API defines (e.g. anthropic-version).
  virtual std::optional<ApiError> CheckHeaders(const httplib::Request&) const { return std::nullopt; }
  // The body, validated, as the internal request.
  virtual ApiResult<ApiRequest> Parse(const nlohmann::ordered_json& body, const ServiceInfo& info,
                                      const RequestLimits& limits) = 0;
  // The prompt's tokens for `api` (the dialect may add KV hints to it).
  virtual ApiResult<std::vector<int32_t>> Prompt(const HandlerContext& ctx, ApiRequest* api) = 0;
  // The writer of this request's response.
  virtual std::unique_ptr<ResponseWriter> Writer(const ApiRequest& api, const ServiceInfo& info,
                                                 const Tokenizer& tok) = 0;
  // After Writer, before StartGeneration: what the dialect reports about the
  // request in response headers and the log (e.g. Anthropic's ignored
  // fields and context edits); `id` is the writer's.
  virtual void BeforeStart(const httplib::Request&, const ApiRequest&, const std::string& /*id*/, httplib::Response&) {}
};

void HandleGeneration(const HandlerContext& ctx, const httplib::Request& req, httplib::Response& res,
                      ApiDialect& dialect);

}  // namespace pg
