#include "server/openai/openai_error.h"

#include <nlohmann/json.hpp>

#include "server/common/api_error.h"
#include "server/core/error_reply.h"
#include "server/core/json_text.h"

namespace pg {

const char* OpenAiErrorType(ApiError::Category category) {
  // Indexed by ApiError::Category, in its order.
  static constexpr const char* kTypes[] = {"invalid_request_error", "authentication_error", "rate_limit_error",
                                           "server_error"};
  return kTypes[static_cast<int>(category)];
}

std::string OpenAiErrorJson(const ApiError& error) {
  nlohmann::json err = {{"message", error.message}, {"type", OpenAiErrorType(error.category)}};
  err["param"] = error.param.empty() ? nlohmann::json(nullptr) : nlohmann::json(error.param);
  err["code"] = error.code.empty() ? nlohmann::json(nullptr) : nlohmann::json(error.code);
  return DumpJson(nlohmann::json{{"error", err}});
}

void SendOpenAiError(httplib::Response& res, const ApiError& error, ServerMetrics* metrics) {
  SendErrorReply(res, error.http_status, OpenAiErrorJson(error), error, metrics);
}

}  // namespace pg
