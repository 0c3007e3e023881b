#include "server/responses/responses_error.h"

#include "server/common/api_error.h"
#include "server/core/error_reply.h"
#include "server/core/json_text.h"

namespace pg {
namespace {

nlohmann::json NullWhenEmpty(const std::string& s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); }

const char* TypeName(ApiError::Category category) {
  using C = ApiError::Category;
  if (category == C::kAuthentication) return "authentication_error";
  if (category == C::kRateLimit) return "rate_limit_error";
  return category == C::kServer ? "server_error" : "invalid_request_error";
}

}  // namespace

nlohmann::json ResponsesErrorJson(const ApiError& error) {
  return {{"error",
           {{"message", error.message},
            {"type", TypeName(error.category)},
            {"param", NullWhenEmpty(error.param)},
            {"code", NullWhenEmpty(error.code)}}}};
}

void SendResponsesError(httplib::Response& res, const ApiError& error, ServerMetrics* metrics) {
  SendErrorReply(res, error.http_status, DumpJson(ResponsesErrorJson(error)), error, metrics);
}

}  // namespace pg
