#include "server/anthropic/anthropic_error.h"

#include <fmt/format.h>

#include "server/common/api_error.h"
#include "server/core/error_reply.h"
#include "server/core/json_text.h"

namespace pg {

using json = nlohmann::json;

const char* AnthropicErrorType(int http_status) {
  switch (http_status) {
    case 401: return "authentication_error";
    case 403: return "permission_error";
    case 404: return "not_found_error";
    case 413: return "request_too_large";
    case 429: return "rate_limit_error";
    case 503:
    case 529: return "overloaded_error";
    default: return http_status >= 500 ? "api_error" : "invalid_request_error";
  }
}

int AnthropicHttpStatus(int http_status) { return http_status == 503 ? 529 : http_status; }

json AnthropicErrorJson(const ApiError& error) {
  return {{"type", "error"}, {"error", {{"type", AnthropicErrorType(error.http_status)}, {"message", error.message}}}};
}

ApiError AnthropicContextError(const ContextOverflow& o) {
  if (o.prompt_alone) {
    return BadRequest(fmt::format("prompt is too long: {} tokens > {} maximum", o.prompt_tokens, o.limit - 1),
                      "messages", "context_length_exceeded");
  }
  return BadRequest(fmt::format("input length and `max_tokens` exceed context limit: {} + {} > {}", o.prompt_tokens,
                                o.max_tokens, o.limit),
                    "max_tokens", "context_length_exceeded");
}

void SendAnthropicError(httplib::Response& res, const ApiError& error, ServerMetrics* metrics) {
  SendErrorReply(res, AnthropicHttpStatus(error.http_status), DumpJson(AnthropicErrorJson(error)), error, metrics);
}

}  // namespace pg
