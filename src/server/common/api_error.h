// ApiError: what went wrong with a request, in no API's words: its HTTP
// status, a category, the message, the offending field and a
// machine-readable code. Request parsing returns these instead of throwing;
// each dialect words them in its own body (openai/openai_error.h,
// anthropic/anthropic_error.h, responses/responses_error.h) and
// core/error_reply.h sends that body. Plain value type.
#pragma once

#include <string>

#include "base/status.h"

namespace pg {

struct ApiError {
  // Whose fault, as the dialects' error types distinguish it.
  enum class Category { kInvalidRequest, kAuthentication, kRateLimit, kServer };

  int http_status = 400;
  Category category = Category::kInvalidRequest;
  std::string message;
  std::string param;  // offending field ("" = null)
  std::string code;   // machine-readable ("" = null)

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
