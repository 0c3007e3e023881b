#include "server/error_response.h"

#include "server/anthropic/anthropic_error.h"
#include "server/common/api_error.h"
#include "server/openai/openai_error.h"
#include "server/responses/responses_error.h"

namespace pg {
namespace {

bool HasPathPrefix(const std::string& path, const std::string& prefix) {
  return path.rfind(prefix, 0) == 0 && (path.size() == prefix.size() || path[prefix.size()] == '/');
}

}  // namespace

bool IsAnthropicPath(const std::string& path) { return HasPathPrefix(path, "/v1/messages"); }

ErrorShape ErrorShapeForPath(const std::string& path) {
  if (IsAnthropicPath(path)) return ErrorShape::kAnthropic;
  return HasPathPrefix(path, "/v1/responses") ? ErrorShape::kResponses : ErrorShape::kOpenAi;
}

void SendError(httplib::Response& res, ErrorShape shape, const ApiError& error, ServerMetrics* metrics) {
  switch (shape) {
    case ErrorShape::kAnthropic: return SendAnthropicError(res, error, metrics);
    case ErrorShape::kResponses: return SendResponsesError(res, error, metrics);
    case ErrorShape::kOpenAi: return SendOpenAiError(res, error, metrics);
  }
}

}  // namespace pg
