// OpenAI's error body, byte for byte as clients (and the e2e tests) read it,
// and the Responses API's, which carries the same object.
#include "server/openai/openai_error.h"

#include <gtest/gtest.h>

#include "server/responses/responses_error.h"

namespace pg {
namespace {

TEST(OpenAiError, BodyHasSortedKeysAndNullsForEmptyFields) {
  EXPECT_EQ(OpenAiErrorJson(BadRequest("bad 'x'", "x")),
            R"({"error":{"code":null,"message":"bad 'x'","param":"x","type":"invalid_request_error"}})");
  EXPECT_EQ(OpenAiErrorJson(Unauthorized("no key")),
            R"({"error":{"code":"invalid_api_key","message":"no key","param":null,"type":"authentication_error"}})");
  EXPECT_EQ(OpenAiErrorJson(TooManyRequests("full")),
            R"({"error":{"code":"queue_full","message":"full","param":null,"type":"rate_limit_error"}})");
  EXPECT_EQ(OpenAiErrorJson(ServiceUnavailable("busy")),
            R"({"error":{"code":"unavailable","message":"busy","param":null,"type":"server_error"}})");
}

TEST(OpenAiError, InvalidUtf8InTheMessageIsReplacedNotThrown) {
  EXPECT_EQ(
      OpenAiErrorJson(BadRequest("x\xff")),
      "{\"error\":{\"code\":null,\"message\":\"x\xEF\xBF\xBD\",\"param\":null,\"type\":\"invalid_request_error\"}}");
}

TEST(ResponsesError, SameObjectAsOpenAisOtherRoutes) {
  for (const ApiError& e : {BadRequest("m", "input", "c"), Unauthorized("k"), TooManyRequests("q"), ServerError("s"),
                            NotFoundError("n", "model_not_found")}) {
    EXPECT_EQ(ResponsesErrorJson(e).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace), OpenAiErrorJson(e));
  }
}

}  // namespace
}  // namespace pg
