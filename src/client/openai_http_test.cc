#include "client/openai_http.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "client/sse_parser.h"

namespace pg {
namespace {

TEST(ServerUrlTest, OriginAndPrefix) {
  auto u = ParseServerUrl("http://127.0.0.1:8080/v1/");
  ASSERT_TRUE(u.ok());
  EXPECT_EQ(u->origin, "http://127.0.0.1:8080");
  EXPECT_EQ(u->prefix, "");
  EXPECT_EQ(ParseServerUrl("http://h:1/base")->prefix, "/base");
  EXPECT_EQ(ParseServerUrl("http://h:1/base/v1")->prefix, "/base");
  EXPECT_FALSE(ParseServerUrl("ftp://x").ok());
  EXPECT_EQ(ParseServerUrl("https://x.org/v1")->origin, "https://x.org");
  EXPECT_FALSE(ParseServerUrl("http://:80").ok());
  EXPECT_FALSE(ParseServerUrl("http://h:99999").ok());
  EXPECT_FALSE(ParseServerUrl("http://h:8a").ok());
  EXPECT_FALSE(OpenAiHttp::Create({.url = "http://h:1", .timeout_s = 0}).ok());
}

TEST(SseParser, RobustToChunkBoundaries) {
  const std::string stream =
      ": comment\r\n"
      "data: {\"a\":1}\r\n\r\n"
      "event: x\n"
      "data: {\"b\":\n"
      "data: 2}\n\n"
      "data:[DONE]\n\n";
  for (size_t step = 1; step <= stream.size(); ++step) {
    std::vector<std::string> events;
    SseParser p([&](const std::string& d) { events.push_back(d); });
    for (size_t i = 0; i < stream.size(); i += step) p.Feed(stream.data() + i, std::min(step, stream.size() - i));
    p.Finish();
    ASSERT_EQ(events.size(), 3u) << "step " << step;
    EXPECT_EQ(events[0], "{\"a\":1}");
    EXPECT_EQ(events[1], "{\"b\":\n2}");
    EXPECT_EQ(events[2], "[DONE]");
  }
  std::vector<std::string> events;
  SseParser p([&](const std::string& d) { events.push_back(d); });
  p.Feed("data: tail-without-blank-line", 29);
  p.Finish();
  ASSERT_EQ(events.size(), 1u);
  EXPECT_EQ(events[0], "tail-without-blank-line");
}

}  // namespace
}  // namespace pg
