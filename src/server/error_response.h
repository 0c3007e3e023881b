// Error responses in the words of the API a path belongs to: Anthropic's
// (anthropic/anthropic_error.h) on /v1/messages and below, the Responses
// API's (responses/responses_error.h) on /v1/responses and below, OpenAI's
// (openai/openai_error.h) on every other path. Each dialect's handlers send
// their own; this picks one by path for what every route shares.
//
// The shared guards (API key, body size, wrong method, no route) write
// through SendError with the request's path, so their answers are in the
// path's shape before httplib compresses the body (Accept-Encoding: gzip).
//
// Thread-safety: pure functions over the response they are given.
#pragma once

#include <httplib.h>

#include <string>

#include "server/common/api_error.h"
#include "server/core/server_metrics.h"

namespace pg {

enum class ErrorShape { kOpenAi, kAnthropic, kResponses };

// /v1/messages and everything under it.
bool IsAnthropicPath(const std::string& path);
ErrorShape ErrorShapeForPath(const std::string& path);

// Writes `error` as the response (status + body) and counts it (metrics may be null).
void SendError(httplib::Response& res, ErrorShape shape, const ApiError& error, ServerMetrics* metrics);

}  // namespace pg
