// RequestLog: one INFO line per HTTP request, written when its response
// (streams included) has been sent:
//
//   request POST /v1/messages status=400 error=invalid_request_error
//     prompt_tokens=- completion_tokens=- cached_tokens=- duration_ms=3.1
//     [skipped_tools=web_search,image_generation]   (hosted tools not offered)
//
// The token fields come from the generation the request ran (ServerMetrics::
// CountTokens notes them for the thread serving the request; "-" when it ran
// none), the error code from the error body (error.code, else error.type),
// noted before the body is compressed.
//
// Thread-safety: the record is per HTTP worker thread (one request at a time
// on each); Begin/NoteTokens/Line run on that thread.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "server/core/generation_runner.h"

namespace pg {

struct RequestLogRecord {
  double start_s = 0;
  int64_t prompt_tokens = -1;  // -1 = no generation
  int64_t completion_tokens = -1;
  int64_t cached_tokens = -1;
  std::string error;          // the error body's code or type ("" = none)
  std::string skipped_tools;  // hosted tool types not offered, comma-separated ("" = none)
};

// Starts this thread's record for a new request.
void BeginRequestLog(double now_s);
// Notes the tokens of the generation this thread's request ran.
void NoteRequestTokens(const GenerationResult& result);
// Notes the hosted tool declarations the request's model was not offered
// (ApiRequest::skipped_tools): the line ends in " skipped_tools=web_search,...".
void NoteRequestSkippedTools(const std::vector<std::string>& types);
// Notes the error code of the response about to be written: from SendError
// (error_response.h), where the body is written, and from httplib's
// post-routing handler (httplib's own errors). A body that is no error JSON
// (compressed by then) leaves the code noted before.
void NoteRequestResponse(int status, const std::string& body);
// The log line for this thread's request.
std::string RequestLogLine(const std::string& method, const std::string& path, int status, double now_s);
// The error code of an error body (OpenAI's or Anthropic's shape); "" when none.
std::string ErrorCodeOf(const std::string& body);

}  // namespace pg
