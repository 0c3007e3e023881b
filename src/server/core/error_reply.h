// SendErrorReply: writes an error answer a dialect has worded (its status and
// JSON body) into the response, notes it for the request's log line
// (request_log.h, before any compression) and counts it on /metrics by the
// error's kind. The dialects' senders (openai/openai_error.h,
// anthropic/anthropic_error.h, responses/responses_error.h) end here.
//
// Thread-safety: writes only the response it is given; metrics are thread-safe.
#pragma once

#include <httplib.h>

#include <string>

#include "server/common/api_error.h"
#include "server/core/server_metrics.h"

namespace pg {

void SendErrorReply(httplib::Response& res, int http_status, std::string body, const ApiError& error,
                    ServerMetrics* metrics);

}  // namespace pg
