#include "server/error_response.h"

#include "server/anthropic/anthropic_response.h"
#include "server/core/request_log.h"
#include "server/openai/openai_response.h"

namespace pg {

bool IsAnthropicPath(const std::string& path) {
  static const std::string kPrefix = "/v1/messages";
  return path.rfind(kPrefix, 0) == 0 && (path.size() == kPrefix.size() || path[kPrefix.size()] == '/');
}

ErrorShape ErrorShapeForPath(const std::string& path) {
  return IsAnthropicPath(path) ? ErrorShape::kAnthropic : ErrorShape::kOpenAi;
}

void SendError(httplib::Response& res, ErrorShape shape, const ApiError& error, ServerMetrics* metrics) {
  if (shape == ErrorShape::kAnthropic) {
    res.status = AnthropicHttpStatus(error.http_status);
    res.set_content(DumpJson(AnthropicErrorJson(error)), "application/json");
  } else {
    res.status = error.http_status;
    res.set_content(error.ToJson(), "application/json");
  }
  NoteRequestResponse(res.status, res.body);  // for the log line, before any compression
  if (metrics) metrics->errors->Inc({error.kind()});
}

void SendApiError(httplib::Response& res, const ApiError& error, ServerMetrics* metrics) {
  SendError(res, ErrorShape::kOpenAi, error, metrics);
}

void SendAnthropicError(httplib::Response& res, const ApiError& error, ServerMetrics* metrics) {
  SendError(res, ErrorShape::kAnthropic, error, metrics);
}

}  // namespace pg
