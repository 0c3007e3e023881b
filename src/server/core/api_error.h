// ApiError: an OpenAI-style error response,
//   {"error": {"message": ..., "type": ..., "param": ..., "code": ...}}
// with its HTTP status. Request parsing returns these instead of throwing.
// Plain value type.
#pragma once

#include <string>

#include "base/status.h"

namespace pg {

struct ApiError {
  int http_status = 400;
  std::string type = "invalid_request_error";
  std::string message;
  std::string param;  // offending field ("" = null)
  std::string code;   // machine-readable ("" = null)

  // The JSON body, one line.
  std::string ToJson() const;
  // Short label for metrics: "invalid_request", "auth", "not_found", ...
  const char* kind() const;
};

ApiError BadRequest(std::string message, std::string param = "", std::string code = "");
ApiError Unauthorized(std::string message);
ApiError NotFoundError(std::string message, std::string code = "");
ApiError PayloadTooLarge(std::string message);
ApiError TooManyRequests(std::string message);
ApiError ServiceUnavailable(std::string message);
ApiError ServerError(std::string message);
// Maps an engine Status: ResourceExhausted -> 429, InvalidArgument/OutOfRange
// -> 400, Unavailable -> 503, else 500.
ApiError FromStatus(const Status& status);

// Result-like holder for parse steps: either a value or an ApiError.
template <typename T>
struct ApiResult {
  ApiResult(T v) : value(std::move(v)), ok_(true) {}          // NOLINT: implicit on purpose
  ApiResult(ApiError e) : error(std::move(e)), ok_(false) {}  // NOLINT
  bool ok() const { return ok_; }
  T value{};
  ApiError error;

 private:
  bool ok_;
};

}  // namespace pg
