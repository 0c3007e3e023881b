#include "server/core/request_log.h"

#include <gtest/gtest.h>

namespace pg {
namespace {

TEST(RequestLog, LineCarriesStatusCodeTokensAndDuration) {
  BeginRequestLog(10.0);
  NoteRequestResponse(200, "{}");
  EXPECT_EQ(RequestLogLine("GET", "/health", 200, 10.5),
            "request GET /health status=200 error=- prompt_tokens=- completion_tokens=- cached_tokens=- "
            "duration_ms=500.0");
  BeginRequestLog(1.0);
  GenerationResult r;
  r.prompt_tokens = 30;
  r.completion_tokens = 4;
  r.cache.cached_tokens = 16;
  NoteRequestTokens(r);
  EXPECT_EQ(RequestLogLine("POST", "/v1/responses", 200, 1.25),
            "request POST /v1/responses status=200 error=- prompt_tokens=30 completion_tokens=4 cached_tokens=16 "
            "duration_ms=250.0");
  BeginRequestLog(1.0);
  const std::string openai =
      R"({"error": {"message": "x", "type": "invalid_request_error", "code": "context_length_exceeded"}})";
  NoteRequestResponse(400, openai);
  EXPECT_NE(RequestLogLine("POST", "/v1/chat/completions", 400, 1.0).find("error=context_length_exceeded"),
            std::string::npos);
  EXPECT_EQ(ErrorCodeOf(R"({"type": "error", "error": {"type": "invalid_request_error", "message": "m"}})"),
            "invalid_request_error");
  EXPECT_EQ(ErrorCodeOf("not json"), "");
}

TEST(RequestLog, LineNamesSkippedHostedTools) {
  BeginRequestLog(1.0);
  NoteRequestSkippedTools({"web_search", "image_generation"});
  EXPECT_EQ(RequestLogLine("POST", "/v1/responses", 200, 1.0),
            "request POST /v1/responses status=200 error=- prompt_tokens=- completion_tokens=- cached_tokens=- "
            "duration_ms=0.0 skipped_tools=web_search,image_generation");
  BeginRequestLog(1.0);  // a new request starts without
  EXPECT_EQ(RequestLogLine("POST", "/v1/responses", 200, 1.0).find("skipped_tools"), std::string::npos);
}

}  // namespace
}  // namespace pg
