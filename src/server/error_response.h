// Error responses in the words of the API a path belongs to: OpenAI's body
// {"error": {"message", "type", "param", "code"}} with the error's status on
// every path but Anthropic's; on /v1/messages and below, Anthropic's
// {"type": "error", "error": {"type", "message"}} with Anthropic's status
// (anthropic_response.h: a 503 is sent as 529).
//
// The shared guards (API key, body size, wrong method, no route) write
// through SendError with the request's path, so their answers are in the
// path's shape before httplib compresses the body (Accept-Encoding: gzip).
//
// Thread-safety: pure functions over the response they are given.
#pragma once

#include <httplib.h>

#include <string>

#include "server/core/api_error.h"
#include "server/core/server_metrics.h"

namespace pg {

enum class ErrorShape { kOpenAi, kAnthropic };

// /v1/messages and everything under it.
bool IsAnthropicPath(const std::string& path);
ErrorShape ErrorShapeForPath(const std::string& path);

// Writes `error` as the response (status + body) and counts it (metrics may be null).
void SendError(httplib::Response& res, ErrorShape shape, const ApiError& error, ServerMetrics* metrics);
void SendApiError(httplib::Response& res, const ApiError& error, ServerMetrics* metrics);        // OpenAI
void SendAnthropicError(httplib::Response& res, const ApiError& error, ServerMetrics* metrics);  // Anthropic

}  // namespace pg
