#include "server/core/api_error.h"

#include <nlohmann/json.hpp>

namespace pg {

std::string ApiError::ToJson() const {
  nlohmann::json err = {{"message", message}, {"type", type}};
  err["param"] = param.empty() ? nlohmann::json(nullptr) : nlohmann::json(param);
  err["code"] = code.empty() ? nlohmann::json(nullptr) : nlohmann::json(code);
  // Messages may quote user input; replace rather than throw on bad UTF-8.
  return nlohmann::json{{"error", err}}.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

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
ApiError Make(int status, const char* type, std::string message, std::string param = "", std::string code = "") {
  ApiError e;
  e.http_status = status;
  e.type = type;
  e.message = std::move(message);
  e.param = std::move(param);
  e.code = std::move(code);
  return e;
}
}  // namespace

ApiError BadRequest(std::string message, std::string param, std::string code) {
  return Make(400, "invalid_request_error", std::move(message), std::move(param), std::move(code));
}
ApiError Unauthorized(std::string message) {
  return Make(401, "authentication_error", std::move(message), "", "invalid_api_key");
}
ApiError NotFoundError(std::string message, std::string code) {
  return Make(404, "invalid_request_error", std::move(message), "", std::move(code));
}
ApiError PayloadTooLarge(std::string message) {
  return Make(413, "invalid_request_error", std::move(message), "", "payload_too_large");
}
ApiError TooManyRequests(std::string message) {
  return Make(429, "rate_limit_error", std::move(message), "", "queue_full");
}
ApiError ServiceUnavailable(std::string message) {
  return Make(503, "server_error", std::move(message), "", "unavailable");
}
ApiError ServerError(std::string message) { return Make(500, "server_error", std::move(message)); }

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
