#include "server/http/http_limit_error.h"

#include <fmt/format.h>

#include "server/common/api_error.h"

namespace pg {
namespace {

ApiError Make(int status, std::string message, std::string code) {
  ApiError e = BadRequest(std::move(message), "", std::move(code));
  e.http_status = status;
  return e;
}

const char* ReasonPhrase(int status) {
  switch (status) {
    case 400: return "Bad Request";
    case 408: return "Request Timeout";
    case 413: return "Payload Too Large";
    case 414: return "URI Too Long";
    case 431: return "Request Header Fields Too Large";
    case 501: return "Not Implemented";
    case 503: return "Service Unavailable";
    default: return status >= 500 ? "Internal Server Error" : "Bad Request";
  }
}

}  // namespace

ApiError StreamLimitError(GuardedStream::Limit limit, const ServerOptions& o) {
  using Limit = GuardedStream::Limit;
  switch (limit) {
    case Limit::kHeaderBytes:
      return Make(
          431,
          fmt::format("the request line and headers are larger than {} bytes (--max-header-bytes)", o.max_header_bytes),
          "header_too_large");
    case Limit::kHeaderCount:
      return Make(431, fmt::format("the request has more than {} header lines (--max-headers)", o.max_headers),
                  "too_many_headers");
    case Limit::kHeaderLine:
      return Make(431, fmt::format("a header line is longer than {} bytes", kMaxHeaderLineBytes), "header_too_large");
    case Limit::kUrl:
      return Make(414,
                  fmt::format("the request line (method, URL, version) is longer than {} bytes (--max-url-bytes)",
                              o.max_url_bytes),
                  "uri_too_long");
    case Limit::kBody: return BodyTooLargeError(o);
    case Limit::kFraming: return Make(400, "the request's HTTP framing is malformed", "bad_framing");
    case Limit::kTimeout:
    case Limit::kNone: break;
  }
  return Make(400,
              fmt::format("the request did not arrive in time (headers within {} s, body within {} s, "
                          "{} s at most between reads)",
                          o.header_timeout_s, o.body_timeout_s, o.read_timeout_s),
              "request_timeout");
}

ApiError StreamError(const GuardedStream& stream, const ServerOptions& options) {
  if (stream.limit() != GuardedStream::Limit::kFraming) return StreamLimitError(stream.limit(), options);
  const FramingError& f = stream.framing_error();
  return Make(f.status, f.message, f.code);
}

ApiError BodyTooLargeError(const ServerOptions& o) {
  return PayloadTooLarge(fmt::format("the request body is larger than {} bytes (--max-body-bytes)", o.max_body_bytes));
}

ApiError FormBodyTooLargeError() {
  return PayloadTooLarge(
      "a request body sent as application/x-www-form-urlencoded is limited to 8192 bytes; send the JSON "
      "body with 'Content-Type: application/json'");
}

std::string RawErrorResponse(const ApiError& error, const std::string& body) {
  return fmt::format(
      "HTTP/1.1 {} {}\r\nContent-Type: application/json\r\nConnection: close\r\nContent-Length: {}\r\n\r\n{}",
      error.http_status, ReasonPhrase(error.http_status), body.size(), body);
}

}  // namespace pg
