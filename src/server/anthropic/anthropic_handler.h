// AnthropicHandler: serves POST /v1/messages and /v1/messages/count_tokens
// (Anthropic's Messages API). /v1/messages is the Anthropic dialect
// (generation_handler.h) of the one generation path: the body becomes the
// internal ApiRequest on the way in (anthropic_request.h), its
// cache_control breakpoints KV retention hints (anthropic_cache_control.h),
// and an AnthropicWriter (anthropic_writer.h) renders the message object or
// its named SSE events on the way out.
//
// Errors on these paths use Anthropic's shape (anthropic_error.h), the
// shared guards' (auth, body size, wrong method, unknown route) included.
//
// Thread-safety: as CompletionHandler; Messages/CountTokens run concurrently.
#pragma once

#include <httplib.h>

#include <optional>

#include "server/anthropic/anthropic_error.h"
#include "server/common/api_error.h"
#include "server/core/handler_context.h"

namespace pg {

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
