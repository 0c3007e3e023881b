// An ApiError in OpenAI's words: the body
//   {"error": {"message": ..., "type": ..., "param": ..., "code": ...}}
// (param and code null when empty) with the error's own status, on
// /v1/chat/completions, /v1/completions, /v1/models and the server's other
// routes; the type is the category's (invalid_request_error,
// authentication_error, rate_limit_error, server_error). Also what the front
// door answers before a request's path is known (http/guarded_http_server.h).
//
// Thread-safety: pure functions over the response they are given.
#pragma once

#include <httplib.h>

#include <string>

#include "server/common/api_error.h"
#include "server/core/server_metrics.h"

namespace pg {

const char* OpenAiErrorType(ApiError::Category category);
// The body, one line (invalid UTF-8 quoted from the request becomes U+FFFD).
std::string OpenAiErrorJson(const ApiError& error);
// Writes the error as the response and counts it (metrics may be null).
void SendOpenAiError(httplib::Response& res, const ApiError& error, ServerMetrics* metrics);

}  // namespace pg
