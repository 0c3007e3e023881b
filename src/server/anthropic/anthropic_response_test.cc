#include "server/anthropic/anthropic_response.h"

#include <gtest/gtest.h>

#include <sstream>

#include "server/anthropic/anthropic_error.h"
#include "server/common/api_error.h"
#include "server/core/cache_usage_json.h"
#include "server/openai/openai_response.h"
#include "testing/http_test_util.h"

namespace pg {
namespace {

using json = nlohmann::json;

using testing::SseEvents;

TEST(AnthropicResponse, ErrorTypesAndStatuses) {
  EXPECT_STREQ(AnthropicErrorType(400), "invalid_request_error");
  EXPECT_STREQ(AnthropicErrorType(401), "authentication_error");
  EXPECT_STREQ(AnthropicErrorType(404), "not_found_error");
  EXPECT_STREQ(AnthropicErrorType(413), "request_too_large");
  EXPECT_STREQ(AnthropicErrorType(429), "rate_limit_error");
  EXPECT_STREQ(AnthropicErrorType(500), "api_error");
  EXPECT_STREQ(AnthropicErrorType(503), "overloaded_error");
  EXPECT_EQ(AnthropicHttpStatus(503), 529);
  EXPECT_EQ(AnthropicHttpStatus(429), 429);
  json e = AnthropicErrorJson(BadRequest("'max_tokens' is required", "max_tokens"));
  EXPECT_EQ(e, json::parse(R"({"type": "error", "error": {"type": "invalid_request_error",
                                                           "message": "'max_tokens' is required"}})"));
}

TEST(AnthropicResponse, StopReasons) {
  EXPECT_EQ(AnthropicStopReason("stop", ""), "end_turn");
  EXPECT_EQ(AnthropicStopReason("stop", "END"), "stop_sequence");
  EXPECT_EQ(AnthropicStopReason("length", ""), "max_tokens");
  EXPECT_EQ(AnthropicStopReason("tool_calls", ""), "tool_use");
}

TEST(AnthropicResponse, CacheUsageSplitsThePrompt) {
  // Breakpoints at 10 (1h) and 30 (5m) tokens of a 50-token prompt.
  std::vector<BreakpointPrefix> bps = {{10, 3600}, {30, 300}};
  AnthropicCacheUsage cold = AccountCacheUsage(50, 0, bps);
  EXPECT_EQ(cold.cache_read_input_tokens, 0);
  EXPECT_EQ(cold.cache_creation_input_tokens, 30);
  EXPECT_EQ(cold.ephemeral_1h_input_tokens, 10);
  EXPECT_EQ(cold.ephemeral_5m_input_tokens, 20);
  EXPECT_EQ(cold.input_tokens, 20);
  AnthropicCacheUsage warm = AccountCacheUsage(50, 16, bps);
  EXPECT_EQ(warm.cache_read_input_tokens, 16);
  EXPECT_EQ(warm.cache_creation_input_tokens, 14);
  EXPECT_EQ(warm.ephemeral_1h_input_tokens, 0);
  EXPECT_EQ(warm.input_tokens, 20);
  AnthropicCacheUsage hot = AccountCacheUsage(50, 48, bps);
  EXPECT_EQ(hot.cache_creation_input_tokens, 0);
  EXPECT_EQ(hot.input_tokens, 2);
  AnthropicCacheUsage none = AccountCacheUsage(50, 16, {{-1, 300}});
  EXPECT_EQ(none.cache_creation_input_tokens, 0);
  EXPECT_EQ(none.input_tokens, 34);
}

TEST(AnthropicResponse, UsageCarriesProsgrowFiguresNested) {
  GenerationResult r;
  r.prompt_tokens = 50;
  r.completion_tokens = 7;
  r.cache.cached_tokens = 16;
  r.cache[kDeviceTier] = 12;
  r.cache[kHostTier] = 4;
  r.cache.miss.never_seen = 24;
  r.cache.miss.evicted = 10;
  r.cache.miss.evicted_by_tier[kDeviceTier] = 2;
  r.cache.miss.evicted_by_tier[kHostTier] = 5;
  r.cache.miss.evicted_by_tier[kDiskTier] = 3;
  r.cache.miss.evicted_age_s = 1.5;
  json u = AnthropicUsageJson(AccountCacheUsage(50, 16, {{30, 300}}), 7, r);
  EXPECT_EQ(u["input_tokens"], 20);
  EXPECT_EQ(u["output_tokens"], 7);
  EXPECT_EQ(u["cache_read_input_tokens"], 16);
  EXPECT_EQ(u["cache_creation_input_tokens"], 14);
  EXPECT_EQ(u["cache_creation"]["ephemeral_5m_input_tokens"], 14);
  EXPECT_EQ(u["prosgrow"]["prompt_tokens"], 50);
  EXPECT_EQ(u["prosgrow"]["cached_tokens_by_tier"]["device"], 12);
  EXPECT_EQ(u["prosgrow"]["cached_tokens_by_tier"]["host"], 4);
  EXPECT_FALSE(u["prosgrow"].contains("miss"));
  // The same object as OpenAI's usage.prompt_tokens_details.miss_reasons.
  const json& m = u["prosgrow"]["miss_reasons"];
  EXPECT_EQ(m, MissReasonsJson(r.cache.miss));
  EXPECT_EQ(m["never_seen"], 24);
  EXPECT_EQ(m["evicted"], 10);
  EXPECT_EQ(m["evicted_by_tier"], json::parse(R"({"device": 2, "host": 5, "disk": 3})"));
  EXPECT_EQ(m["evicted_seconds_ago"], 1.5);
  EXPECT_EQ(UsageJson(r)["prompt_tokens_details"]["miss_reasons"], m);
}

TEST(AnthropicResponse, MessageWithToolUse) {
  std::vector<ToolCall> calls = {{"call_abc123", "get_weather", R"({"city":"Paris"})"}};
  json m = AnthropicMessageJson({"msg_1", "tiny"}, "Checking.", calls, "tool_use", "", json::object());
  EXPECT_EQ(m["type"], "message");
  EXPECT_EQ(m["role"], "assistant");
  EXPECT_EQ(m["stop_sequence"], nullptr);
  ASSERT_EQ(m["content"].size(), 2u);
  EXPECT_EQ(m["content"][0], json::parse(R"({"type": "text", "text": "Checking."})"));
  EXPECT_EQ(m["content"][1], json::parse(R"({"type": "tool_use", "id": "toolu_abc123", "name": "get_weather",
                                             "input": {"city": "Paris"}})"));
  json empty = AnthropicMessageJson({"msg_2", "tiny"}, "", {}, "end_turn", "", json::object());
  EXPECT_EQ(empty["content"], json::parse(R"([{"type": "text", "text": ""}])"));
}

TEST(AnthropicResponse, StreamEventsInOrder) {
  AnthropicStreamWriter w({"msg_1", "tiny"});
  std::string sse = w.Start(json{
      {"input_tokens", 12}, {"cache_read_input_tokens", 4}});  // one call per statement: the writer's order matters
  sse += w.Text("Hel");
  sse += w.Text("");
  sse += w.Text("lo");
  sse += w.Finish({{"call_x", "f", R"({"a":1})"}}, "tool_use", "", json{{"output_tokens", 3}});
  auto ev = SseEvents(sse);
  std::vector<std::string> names;
  for (auto& [name, data] : ev) {
    EXPECT_EQ(name, data["type"]);  // the SSE event name is the data's type
    names.push_back(name);
  }
  EXPECT_EQ(names,
            (std::vector<std::string>{"message_start", "ping", "content_block_start", "content_block_delta",
                                      "content_block_delta", "content_block_stop", "content_block_start",
                                      "content_block_delta", "content_block_stop", "message_delta", "message_stop"}));
  EXPECT_EQ(ev[0].second["message"]["usage"]["input_tokens"], 12);
  EXPECT_EQ(ev[0].second["message"]["usage"]["cache_read_input_tokens"], 4);
  EXPECT_EQ(ev[0].second["message"]["content"], json::array());
  EXPECT_EQ(ev[3].second["delta"], json::parse(R"({"type": "text_delta", "text": "Hel"})"));
  EXPECT_EQ(ev[5].second["index"], 0);
  EXPECT_EQ(ev[6].second["index"], 1);
  EXPECT_EQ(ev[6].second["content_block"],
            json::parse(R"({"type": "tool_use", "id": "toolu_x", "name": "f", "input": {}})"));
  EXPECT_EQ(ev[7].second["delta"], json::parse(R"({"type": "input_json_delta", "partial_json": "{\"a\":1}"})"));
  EXPECT_EQ(ev[9].second["delta"]["stop_reason"], "tool_use");
  EXPECT_EQ(ev[9].second["usage"]["output_tokens"], 3);
}

TEST(AnthropicResponse, StreamWithoutTextHasOneEmptyTextBlock) {
  AnthropicStreamWriter w({"msg_1", "tiny"});
  std::string sse = w.Start(json{{"input_tokens", 3}});
  sse += w.Finish({}, "max_tokens", "", json::object());
  auto ev = SseEvents(sse);
  ASSERT_EQ(ev.size(), 6u);
  EXPECT_EQ(ev[2].second["content_block"], json::parse(R"({"type": "text", "text": ""})"));
  EXPECT_EQ(ev[3].first, "content_block_stop");
  EXPECT_EQ(ev[4].first, "message_delta");
  EXPECT_EQ(ev[4].second["delta"]["stop_reason"], "max_tokens");
  auto err = SseEvents(w.Error(ServiceUnavailable("overloaded")));
  ASSERT_EQ(err.size(), 1u);
  EXPECT_EQ(err[0].first, "error");
  EXPECT_EQ(err[0].second["error"]["type"], "overloaded_error");
}

}  // namespace
}  // namespace pg
