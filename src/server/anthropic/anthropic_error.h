// An ApiError in Anthropic's words, on /v1/messages and below: the body
// {"type": "error", "error": {"type": ..., "message": ...}} with Anthropic's
// status (a 503 is sent as Anthropic's 529 overloaded_error). The same body
// is the data of a stream's `event: error` (anthropic_response.h).
//
// Thread-safety: pure functions over the response they are given.
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "server/common/api_error.h"
#include "server/core/fit_to_context.h"
#include "server/core/server_metrics.h"

namespace pg {

// Anthropic's error type for an HTTP status (400 invalid_request_error, 401
// authentication_error, 403 permission_error, 404 not_found_error, 413
// request_too_large, 429 rate_limit_error, 503/529 overloaded_error, other
// 5xx api_error) and the status sent (a 503 is sent as Anthropic's 529).
const char* AnthropicErrorType(int http_status);
int AnthropicHttpStatus(int http_status);
nlohmann::json AnthropicErrorJson(const ApiError& error);
// A request past the context in Anthropic's sentences (what Claude Code
// matches): "prompt is too long: N tokens > M maximum" and "input length and
// `max_tokens` exceed context limit: N + M > L" (the KV bound's figures when
// it is the smaller one); code context_length_exceeded. FitToContext's wording.
ApiError AnthropicContextError(const ContextOverflow& overflow);
// Writes the error as the response and counts it (metrics may be null).
void SendAnthropicError(httplib::Response& res, const ApiError& error, ServerMetrics* metrics);

}  // namespace pg
