// AnthropicHandler: serves POST /v1/messages and /v1/messages/count_tokens
// (Anthropic's Messages API) on the same pipeline as the OpenAI endpoints
// (generation_pipeline.h): the body is converted to an ApiRequest
// (anthropic_request.h), rendered through the chat template, its
// cache_control breakpoints turned into KV retention hints
// (anthropic_cache_control.h), generated, and written back as a message
// object or named SSE events (anthropic_response.h).
//
// Errors on these paths use Anthropic's shape; RewriteAnthropicError gives
// it to the errors the shared guards write (auth, body size, JSON depth,
// unknown route) when the path is an Anthropic one.
//
// Thread-safety: as CompletionHandler; Messages/CountTokens run concurrently.
#pragma once

#include <httplib.h>

#include <optional>
#include <string>

#include "server/completion_handler.h"

namespace pg {

// Writes `error` with Anthropic's status and body, and counts it.
void SendAnthropicError(httplib::Response& res, const ApiError& error, ServerMetrics* metrics);

// /v1/messages and everything under it.
bool IsAnthropicPath(const std::string& path);
// An OpenAI error body already in `res` -> Anthropic's shape and status.
void RewriteAnthropicError(httplib::Response& res);
// The anthropic-version header: absent, or a YYYY-MM-DD date from 2023-01-01 on.
std::optional<ApiError> CheckAnthropicVersion(const httplib::Request& req);

class AnthropicHandler {
 public:
  explicit AnthropicHandler(HandlerContext ctx) : ctx_(std::move(ctx)) {}
  void Messages(const httplib::Request& req, httplib::Response& res) const;
  void CountTokens(const httplib::Request& req, httplib::Response& res) const;

 private:
  HandlerContext ctx_;
};

}  // namespace pg
