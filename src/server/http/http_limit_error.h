// The error answered for a request that a GuardedStream limit
// stopped (too many header lines, headers too large, request line too long,
// too slow), and the raw HTTP response that carries it when cpp-httplib gave
// up before it could answer. Each message names the limit and its flag
// (docs/server.md, "Request limits"). Pure functions; thread-safe.
#pragma once

#include <string>

#include "server/common/api_error.h"
#include "server/http/guarded_stream.h"
#include "server/http/server_options.h"

namespace pg {

// 431 for header bytes / count / line length, 414 for the request line,
// 413 for the body, 400 for a timeout.
ApiError StreamLimitError(GuardedStream::Limit limit, const ServerOptions& options);

// The error for what stopped `stream`'s request: StreamLimitError, or for
// bad framing the stream's own 400 / 501 (http_framing.h).
ApiError StreamError(const GuardedStream& stream, const ServerOptions& options);

// 413 for a body past --max-body-bytes.
ApiError BodyTooLargeError(const ServerOptions& options);
// cpp-httplib parses an application/x-www-form-urlencoded body into form
// fields and refuses one over its compiled-in 8,192 bytes with a 413 of its
// own, before --max-body-bytes applies (`curl -d` sends that type unless
// told otherwise). The answer says so and names the fix.
ApiError FormBodyTooLargeError();

// "HTTP/1.1 <status> <reason>" with the JSON `body` (the error in the
// owner's words, GuardedHttpServer::ErrorBody) and Connection: close.
std::string RawErrorResponse(const ApiError& error, const std::string& body);

}  // namespace pg
