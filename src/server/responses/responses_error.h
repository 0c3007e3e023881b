// An ApiError in the Responses API's words, on /v1/responses and below: the
// status as is and the body {"error": {"message", "type", "param", "code"}}
// the openai SDK's APIError reads (param and code null when empty; type
// invalid_request_error, authentication_error, rate_limit_error or
// server_error). A stream that fails after it opened reports the error in its
// response.failed event instead (responses_response.h).
//
// Thread-safety: pure functions over the response they are given.
#pragma once

#include <httplib.h>

#include <nlohmann/json.hpp>

#include "server/common/api_error.h"
#include "server/core/server_metrics.h"

namespace pg {

nlohmann::json ResponsesErrorJson(const ApiError& error);
// Writes the error as the response and counts it (metrics may be null).
void SendResponsesError(httplib::Response& res, const ApiError& error, ServerMetrics* metrics);

}  // namespace pg
