// /v1/messages and /v1/messages/count_tokens through a real HttpServer over
// the fake engine: the protocol (bodies, SSE events, tool calls, stop
// sequences, cache hints, session ids) and every error in Anthropic's shape.
#include "server/anthropic/anthropic_handler.h"

#include <gtest/gtest.h>

#include <sstream>

#include "server/anthropic/anthropic_error.h"
#include "server/error_response.h"
#include "testing/http_test_util.h"
#include "testing/test_server_harness.h"

namespace pg {
namespace {

using json = nlohmann::json;
using namespace pg::testing;

constexpr const char* kHello =
    R"({"model": "fake-model", "max_tokens": 32, "messages": [{"role": "user", "content": "Hi"}]})";

json Post(const TestServer& t, const std::string& path, const std::string& body, int* status,
          const httplib::Headers& headers = {}) {
  auto res = t.Client().Post(path.c_str(), headers, body, "application/json");
  *status = res ? res->status : -1;
  return res ? json::parse(res->body, nullptr, false) : json();
}

// The error body every failure on these paths has.
void ExpectAnthropicError(const json& body, const std::string& type) {
  ASSERT_TRUE(body.is_object()) << body.dump();
  EXPECT_EQ(body["type"], "error") << body.dump();
  EXPECT_EQ(body["error"]["type"], type) << body.dump();
  EXPECT_TRUE(body["error"]["message"].is_string()) << body.dump();
}

using testing::SseEvents;

TEST(AnthropicHandler, MessageObjectAndUsage) {
  auto t = StartTestServer();
  ASSERT_TRUE(t);
  int status = 0;
  json m = Post(*t, "/v1/messages", kHello, &status, {{"anthropic-version", "2023-06-01"}});
  ASSERT_EQ(status, 200) << m.dump();
  EXPECT_EQ(m["type"], "message");
  EXPECT_EQ(m["role"], "assistant");
  EXPECT_EQ(m["model"], "fake-model");
  EXPECT_EQ(m["id"].get<std::string>().rfind("msg_", 0), 0u);
  EXPECT_EQ(m["content"], json::parse(R"([{"type": "text", "text": "Hello from the fake engine!"}])"));
  EXPECT_EQ(m["stop_reason"], "end_turn");
  EXPECT_EQ(m["stop_sequence"], nullptr);
  const json& u = m["usage"];
  EXPECT_GT(u["output_tokens"].get<int64_t>(), 0);
  EXPECT_EQ(u["input_tokens"].get<int64_t>() + u["cache_read_input_tokens"].get<int64_t>() +
                u["cache_creation_input_tokens"].get<int64_t>(),
            u["prosgrow"]["prompt_tokens"].get<int64_t>());
  EXPECT_EQ(u["prosgrow"]["prompt_tokens"].get<size_t>(), t->service->last_request().prompt.size());

  // count_tokens renders the same prompt.
  json c = Post(*t, "/v1/messages/count_tokens",
                R"({"model": "fake-model", "messages": [{"role": "user", "content": "Hi"}]})", &status);
  ASSERT_EQ(status, 200) << c.dump();
  EXPECT_EQ(c["input_tokens"].get<size_t>(), t->service->last_request().prompt.size());
  EXPECT_EQ(c.size(), 1u);
}

TEST(AnthropicHandler, SamplingSessionAndCacheHintsReachTheEngine) {
  auto t = StartTestServer();
  ASSERT_TRUE(t);
  int status = 0;
  json m = Post(*t, "/v1/messages", R"({"model": "fake-model", "max_tokens": 5, "temperature": 0.25, "top_k": 3,
      "metadata": {"user_id": "agent-7"},
      "system": [{"type": "text", "text": "You are terse.", "cache_control": {"type": "ephemeral", "ttl": "1h"}}],
      "messages": [{"role": "user", "content": "Hi"}]})",
                &status);
  ASSERT_EQ(status, 200) << m.dump();
  GenerationRequest g = t->service->last_request();
  EXPECT_EQ(g.session_id, "agent-7");
  EXPECT_EQ(g.sampling.max_tokens, 5);
  EXPECT_FLOAT_EQ(g.sampling.temperature, 0.25f);
  EXPECT_EQ(g.sampling.top_k, 3);
  ASSERT_EQ(g.kv_hints.size(), 1u);
  EXPECT_EQ(g.kv_hints[0].action, KvHint::Action::kRetain);
  EXPECT_GT(g.kv_hints[0].prefix_tokens, 0);
  EXPECT_LT(g.kv_hints[0].prefix_tokens, static_cast<int64_t>(g.prompt.size()));
  EXPECT_EQ(g.kv_hints[0].ttl_s, 3600);
  // Nothing was cached yet: the prefix up to the breakpoint was written now.
  EXPECT_EQ(m["usage"]["cache_creation_input_tokens"], g.kv_hints[0].prefix_tokens);
  EXPECT_EQ(m["usage"]["cache_creation"]["ephemeral_1h_input_tokens"], g.kv_hints[0].prefix_tokens);
  EXPECT_EQ(m["stop_reason"], "max_tokens");
}

TEST(AnthropicHandler, StreamEvents) {
  auto t = StartTestServer();
  ASSERT_TRUE(t);
  std::string body = json::parse(kHello).dump();
  body.insert(body.size() - 1, R"(,"stream":true)");
  auto res = t->Client().Post("/v1/messages", body, "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_EQ(res->get_header_value("Content-Type").rfind("text/event-stream", 0), 0u);
  auto ev = SseEvents(res->body);
  ASSERT_GE(ev.size(), 7u) << res->body;
  EXPECT_EQ(ev.front().first, "message_start");
  EXPECT_EQ(ev.back().first, "message_stop");
  std::string text;
  for (auto& [name, data] : ev) {
    EXPECT_EQ(name, data["type"]);
    if (name == "content_block_delta") text += data["delta"]["text"].get<std::string>();
  }
  EXPECT_EQ(text, "Hello from the fake engine!");
  const json& delta = ev[ev.size() - 2].second;
  EXPECT_EQ(delta["delta"]["stop_reason"], "end_turn");
  EXPECT_GT(delta["usage"]["output_tokens"].get<int64_t>(), 0);
}

TEST(AnthropicHandler, ToolUseFromTheModel) {
  FakeServiceOptions fake;
  fake.reply =
      "Checking.\n<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
  auto t = StartTestServer(fake);
  ASSERT_TRUE(t);
  const std::string req = R"({"model": "fake-model", "max_tokens": 64, "metadata": {"user_id": "s1"},
      "tools": [{"name": "get_weather", "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}}}],
      "messages": [{"role": "user", "content": "Weather in Paris?"}]})";
  int status = 0;
  json m = Post(*t, "/v1/messages", req, &status);
  ASSERT_EQ(status, 200) << m.dump();
  EXPECT_EQ(m["stop_reason"], "tool_use");
  ASSERT_EQ(m["content"].size(), 2u) << m.dump();
  EXPECT_EQ(m["content"][0], json::parse(R"({"type": "text", "text": "Checking."})"));
  EXPECT_EQ(m["content"][1]["type"], "tool_use");
  EXPECT_EQ(m["content"][1]["id"].get<std::string>().rfind("toolu_", 0), 0u);
  EXPECT_EQ(m["content"][1]["input"], json::parse(R"({"city": "Paris"})"));
  EXPECT_EQ(t->service->tool_call_sessions(), std::vector<std::string>{"s1"});

  std::string streamed = req;
  streamed.insert(streamed.size() - 1, R"(,"stream":true)");
  auto res = t->Client().Post("/v1/messages", streamed, "application/json");
  ASSERT_TRUE(res);
  auto ev = SseEvents(res->body);
  std::string partial, text;
  bool tool_block = false;
  for (auto& [name, data] : ev) {
    if (name == "content_block_delta" && data["delta"]["type"] == "text_delta") {
      EXPECT_FALSE(tool_block);  // the text before the call streams first, in its own block
      text += data["delta"]["text"].get<std::string>();
    }
    if (name == "content_block_start" && data["content_block"]["type"] == "tool_use") tool_block = true;
    if (name == "content_block_delta" && data["delta"]["type"] == "input_json_delta") {
      partial += data["delta"]["partial_json"].get<std::string>();
    }
  }
  EXPECT_TRUE(tool_block) << res->body;
  EXPECT_EQ(text, "Checking.");
  EXPECT_EQ(json::parse(partial), json::parse(R"({"city": "Paris"})"));
  EXPECT_EQ(ev[ev.size() - 2].second["delta"]["stop_reason"], "tool_use");
}

TEST(AnthropicHandler, StopSequence) {
  FakeServiceOptions fake;
  fake.reply = "one two STOP three";
  auto t = StartTestServer(fake);
  ASSERT_TRUE(t);
  int status = 0;
  json m = Post(*t, "/v1/messages", R"({"model": "fake-model", "max_tokens": 32, "stop_sequences": ["STOP"],
      "messages": [{"role": "user", "content": "Hi"}]})",
                &status);
  ASSERT_EQ(status, 200) << m.dump();
  EXPECT_EQ(m["stop_reason"], "stop_sequence");
  EXPECT_EQ(m["stop_sequence"], "STOP");
  EXPECT_EQ(m["content"][0]["text"], "one two ");
}

TEST(AnthropicHandler, AuthWithXApiKeyOrBearer) {
  ServerOptions opts;
  opts.api_key = "sk-test";
  auto t = StartTestServer({}, opts);
  ASSERT_TRUE(t);
  int status = 0;
  json e = Post(*t, "/v1/messages", kHello, &status);
  EXPECT_EQ(status, 401);
  ExpectAnthropicError(e, "authentication_error");
  e = Post(*t, "/v1/messages", kHello, &status, {{"x-api-key", "wrong"}});
  EXPECT_EQ(status, 401);
  Post(*t, "/v1/messages", kHello, &status, {{"x-api-key", "sk-test"}});
  EXPECT_EQ(status, 200);
  Post(*t, "/v1/messages", kHello, &status, {{"Authorization", "Bearer sk-test"}});
  EXPECT_EQ(status, 200);
  // x-api-key works on the OpenAI paths too; their errors keep OpenAI's shape.
  e = Post(*t, "/v1/chat/completions", R"({"messages": [{"role": "user", "content": "Hi"}]})", &status);
  EXPECT_EQ(status, 401);
  EXPECT_EQ(e["error"]["type"], "authentication_error");
  EXPECT_FALSE(e.contains("type"));
}

TEST(AnthropicHandler, ErrorsHaveAnthropicShapeAndStatus) {
  ServerOptions opts;
  opts.max_body_bytes = 4096;
  opts.limits.max_json_depth = 8;
  auto t = StartTestServer({}, opts);
  ASSERT_TRUE(t);
  int status = 0;
  json e =
      Post(*t, "/v1/messages", R"({"model": "fake-model", "messages": [{"role": "user", "content": "Hi"}]})", &status);
  EXPECT_EQ(status, 400);
  ExpectAnthropicError(e, "invalid_request_error");
  EXPECT_NE(e["error"]["message"].get<std::string>().find("max_tokens"), std::string::npos);

  e = Post(*t, "/v1/messages", "{not json", &status);
  EXPECT_EQ(status, 400);
  ExpectAnthropicError(e, "invalid_request_error");
  e = Post(*t, "/v1/messages", std::string(20, '[') + std::string(20, ']'), &status);
  EXPECT_EQ(status, 400);
  ExpectAnthropicError(e, "invalid_request_error");
  e = Post(*t, "/v1/messages", R"({"pad": ")" + std::string(8000, 'x') + R"("})", &status);
  EXPECT_EQ(status, 413);
  ExpectAnthropicError(e, "request_too_large");
  e = Post(*t, "/v1/messages/nope", kHello, &status);
  EXPECT_EQ(status, 404);
  ExpectAnthropicError(e, "not_found_error");
  auto get = t->Client().Get("/v1/messages");
  ASSERT_TRUE(get);
  EXPECT_EQ(get->status, 405);
  ExpectAnthropicError(json::parse(get->body), "invalid_request_error");
  e = Post(*t, "/v1/messages", kHello, &status, {{"anthropic-version", "yesterday"}});
  EXPECT_EQ(status, 400);
  ExpectAnthropicError(e, "invalid_request_error");
  e = Post(*t, "/v1/messages",
           R"({"model": "claude-x", "max_tokens": 8, "messages": [{"role": "user", "content": "Hi"}]})", &status);
  EXPECT_EQ(status, 404);
  ExpectAnthropicError(e, "not_found_error");
  e = Post(*t, "/v1/messages",
           R"({"model": "fake-model", "max_tokens": 2047, "messages": [{"role": "user", "content": "Hi"}]})", &status);
  EXPECT_EQ(status, 400);  // prompt + max_tokens past the 2048-token context
  ExpectAnthropicError(e, "invalid_request_error");
  e = Post(*t, "/v1/messages/count_tokens", R"({"model": "fake-model"})", &status);
  EXPECT_EQ(status, 400);
  ExpectAnthropicError(e, "invalid_request_error");

  t->service->set_ready(false);
  e = Post(*t, "/v1/messages", kHello, &status);
  EXPECT_EQ(status, 529);
  ExpectAnthropicError(e, "overloaded_error");
}

TEST(AnthropicHandler, AnthropicPaths) {
  EXPECT_TRUE(IsAnthropicPath("/v1/messages"));
  EXPECT_TRUE(IsAnthropicPath("/v1/messages/count_tokens"));
  EXPECT_FALSE(IsAnthropicPath("/v1/messagesX"));
  EXPECT_FALSE(IsAnthropicPath("/v1/chat/completions"));
  EXPECT_EQ(ErrorShapeForPath("/v1/messages/count_tokens"), ErrorShape::kAnthropic);
  EXPECT_EQ(ErrorShapeForPath("/v1/responses/resp_1"), ErrorShape::kResponses);
  EXPECT_EQ(ErrorShapeForPath("/v1/responsesX"), ErrorShape::kOpenAi);
  EXPECT_EQ(ErrorShapeForPath("/v1/chat/completions"), ErrorShape::kOpenAi);
}

}  // namespace
}  // namespace pg
