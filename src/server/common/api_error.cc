#include "server/common/api_error.h"

namespace pg {

const char* ApiError::kind() const {
  switch (http_status) {
    case 400: return "invalid_request";
    case 401: return "auth";
    case 404: return "not_found";
    case 405: return "method_not_allowed";
    case 413: return "payload_too_large";
    case 414: return "uri_too_long";
    case 431: return "header_too_large";
    case 429: return "queue_full";
    case 503: return "unavailable";
    default: return "server_error";
  }
}

namespace {
using Category = ApiError::Category;

ApiError Make(int status, Category category, std::string message, std::string param = "", std::string code = "") {
  ApiError e;
  e.http_status = status;
  e.category = category;
  e.message = std::move(message);
  e.param = std::move(param);
  e.code = std::move(code);
  return e;
}
}  // namespace

ApiError BadRequest(std::string message, std::string param, std::string code) {
  return Make(400, Category::kInvalidRequest, std::move(message), std::move(param), std::move(code));
}
ApiError Unauthorized(std::string message) {
  return Make(401, Category::kAuthentication, std::move(message), "", "invalid_api_key");
}
ApiError NotFoundError(std::string message, std::string code) {
  return Make(404, Category::kInvalidRequest, std::move(message), "", std::move(code));
}
ApiError PayloadTooLarge(std::string message) {
  return Make(413, Category::kInvalidRequest, std::move(message), "", "payload_too_large");
}
ApiError TooManyRequests(std::string message) {
  return Make(429, Category::kRateLimit, std::move(message), "", "queue_full");
}
ApiError ServiceUnavailable(std::string message) {
  return Make(503, Category::kServer, std::move(message), "", "unavailable");
}
ApiError ServerError(std::string message) { return Make(500, Category::kServer, std::move(message)); }

ApiError FromStatus(const Status& status) {
  switch (status.code()) {
    case StatusCode::kResourceExhausted: return TooManyRequests(status.message());
    case StatusCode::kInvalidArgument:
    case StatusCode::kOutOfRange: return BadRequest(status.message());
    case StatusCode::kUnavailable: return ServiceUnavailable(status.message());
    default: return ServerError(status.message());
  }
}

}  // namespace pg
