#include "server/responses/responses_response.h"

#include <gtest/gtest.h>

#include <sstream>

#include "server/common/api_error.h"
#include "testing/http_test_util.h"

namespace pg {
namespace {

using json = nlohmann::json;

using testing::SseEvents;

ResponsesHeader Header() { return {"resp_1", "m", 7, {{"store", true}}}; }

TEST(ResponsesResponse, StreamOfTextThenACall) {
  ResponsesStreamWriter w(Header());
  std::string sse = w.Start();
  sse += w.Delta({{"content", "Hel"}});
  sse += w.Delta({{"content", "lo"}});
  sse += w.Delta(
      {{"tool_calls",
        {{{"index", 0}, {"id", "call_abc"}, {"type", "function"}, {"function", {{"name", "f"}, {"arguments", ""}}}}}}});
  sse += w.Delta({{"tool_calls", {{{"index", 0}, {"function", {{"arguments", "{\"a\":"}}}}}}});
  sse += w.Delta({{"tool_calls", {{{"index", 0}, {"function", {{"arguments", "1}"}}}}}}});
  GenerationResult r;
  r.prompt_tokens = 10;
  r.completion_tokens = 5;
  r.cache.cached_tokens = 4;
  sse += w.Finish("stop", ResponsesUsageJson(r));
  auto events = SseEvents(sse);
  std::vector<std::string> types;
  for (size_t i = 0; i < events.size(); ++i) {
    EXPECT_EQ(events[i].first, events[i].second["type"]);  // event name = data type
    EXPECT_EQ(events[i].second["sequence_number"], i);
    types.push_back(events[i].first);
  }
  EXPECT_EQ(types,
            (std::vector<std::string>{
                "response.created", "response.in_progress", "response.output_item.added", "response.content_part.added",
                "response.output_text.delta", "response.output_text.delta", "response.output_text.done",
                "response.content_part.done", "response.output_item.done", "response.output_item.added",
                "response.function_call_arguments.delta", "response.function_call_arguments.delta",
                "response.function_call_arguments.done", "response.output_item.done", "response.completed"}));
  EXPECT_EQ(events[0].second["response"]["status"], "in_progress");
  EXPECT_EQ(events[6].second["text"], "Hello");
  EXPECT_EQ(events[9].second["output_index"], 1);
  EXPECT_EQ(events[12].second["arguments"], "{\"a\":1}");
  const json& done = events.back().second["response"];
  EXPECT_EQ(done["status"], "completed");
  EXPECT_EQ(done["store"], true);
  ASSERT_EQ(done["output"].size(), 2u);
  EXPECT_EQ(done["output"][0]["content"][0]["text"], "Hello");
  EXPECT_EQ(done["output"][1], json::parse(R"({"type": "function_call", "id": "fc_abc", "call_id": "call_abc",
      "name": "f", "arguments": "{\"a\":1}", "status": "completed"})"));
  EXPECT_EQ(done["usage"]["input_tokens_details"]["cached_tokens"], 4);
  EXPECT_EQ(done["usage"]["total_tokens"], 15);
  EXPECT_EQ(ResponsesOutputAsMessages(done["output"]), json::parse(R"([{"role": "assistant", "content": "Hello",
      "tool_calls": [{"id": "call_abc", "type": "function", "function": {"name": "f", "arguments": {"a": 1}}}]}])"));
}

TEST(ResponsesResponse, CutByTheTokenLimitIsIncomplete) {
  ResponsesStreamWriter w(Header());
  std::string sse = w.Start();
  sse += w.Finish("length", nullptr);
  auto events = SseEvents(sse);
  EXPECT_EQ(events.back().first, "response.incomplete");
  EXPECT_EQ(events.back().second["response"]["incomplete_details"]["reason"], "max_output_tokens");
  EXPECT_EQ(events.back().second["response"]["output"].size(), 1u);  // the (empty) message
  json o = ResponsesObjectJson(Header(), "completed", ResponsesOutputItems("hi", {}), nullptr, "stop");
  EXPECT_EQ(o["object"], "response");
  EXPECT_EQ(o["output"][0]["content"][0]["type"], "output_text");
  EXPECT_TRUE(o["incomplete_details"].is_null());
}

TEST(ResponsesResponse, FailureEndsWithResponseFailed) {
  ResponsesStreamWriter w(Header());
  std::string sse = w.Start();
  sse += w.Delta({{"content", "x"}});
  sse += w.Fail(ServerError("generation failed: oom"));
  auto events = SseEvents(sse);
  EXPECT_EQ(events.back().first, "response.failed");
  EXPECT_EQ(events.back().second["response"]["error"]["message"], "generation failed: oom");
}

}  // namespace
}  // namespace pg
