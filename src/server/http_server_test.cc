// HttpServer over FakeInferenceService on a loopback port: only what the
// real engine cannot be made to do on demand — an exact reply text (the
// fallback template, exact prompt tokens, UTF-8 splitting), a model that
// emits a tool call, a cache split over tiers, a service still loading.
// Everything else (errors, API key, 429, disconnects, logprobs, stop strings,
// 64 streams, promtool, header guards) runs against `prosgrow serve` in
// tests/serve_real_test.cc.
#include "server/http_server.h"

#include <gtest/gtest.h>

#include "base/utf8.h"
#include "testing/test_server_harness.h"

namespace pg {
namespace {

using json = nlohmann::json;
using namespace pg::testing;

const char* kChatHi = R"({"model":"fake-model","messages":[{"role":"user","content":"Hi"}]})";

json PostJson(const TestServer& t, const std::string& path, const std::string& body, int* status,
              const httplib::Headers& headers = {}) {
  auto cli = t.Client();
  auto res = cli.Post(path.c_str(), headers, body, "application/json");
  if (!res) {
    *status = -1;
    return nullptr;
  }
  *status = res->status;
  json j = json::parse(res->body, nullptr, false);
  return j;
}

int64_t ReplyTokens(const TestServer& t, const std::string& reply) {
  return static_cast<int64_t>(t.service->tokenizer().Encode(reply, false, true).size());
}

void ExpectUsageShape(const json& usage) {
  ASSERT_TRUE(usage.is_object()) << usage.dump();
  EXPECT_EQ(usage["total_tokens"], usage["prompt_tokens"].get<int64_t>() + usage["completion_tokens"].get<int64_t>());
  const json& d = usage["prompt_tokens_details"];
  ASSERT_TRUE(d["cached_tokens"].is_number_integer()) << usage.dump();
  const json& tiers = d["cached_tokens_by_tier"];
  EXPECT_EQ(d["cached_tokens"],
            tiers["device"].get<int64_t>() + tiers["host"].get<int64_t>() + tiers["disk"].get<int64_t>());
}

TEST(HttpServer, ChatNonStreaming) {
  auto t = StartTestServer();
  ASSERT_TRUE(t);
  int status;
  json j = PostJson(*t, "/v1/chat/completions", kChatHi, &status);
  ASSERT_EQ(status, 200) << j.dump();
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["model"], "fake-model");
  EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
  EXPECT_EQ(j["choices"][0]["message"]["content"], "Hello from the fake engine!");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  EXPECT_TRUE(j["choices"][0]["logprobs"].is_null());
  ExpectUsageShape(j["usage"]);
  GenerationRequest last = t->service->last_request();
  EXPECT_EQ(j["usage"]["prompt_tokens"], static_cast<int64_t>(last.prompt.size()));
  EXPECT_EQ(j["usage"]["completion_tokens"], ReplyTokens(*t, "Hello from the fake engine!") + 1);  // + EOS
  // The prompt went through the (fallback ChatML) template.
  std::string prompt = t->service->tokenizer().Decode(last.prompt, /*render_special=*/true);
  EXPECT_NE(prompt.find("<|im_start|>user\nHi<|im_end|>"), std::string::npos) << prompt;
  EXPECT_NE(prompt.rfind("<|im_start|>assistant\n"), std::string::npos) << prompt;
}

TEST(HttpServer, CompletionsStringAndTokenPrompts) {
  FakeServiceOptions fake;
  fake.reply = "The weather in Paris is sunny.";
  auto t = StartTestServer(fake);
  ASSERT_TRUE(t);
  int status;
  json j = PostJson(*t, "/v1/completions", R"({"prompt":"Hello world","max_tokens":50})", &status);
  ASSERT_EQ(status, 200) << j.dump();
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["choices"][0]["text"], "The weather in Paris is sunny.");
  EXPECT_EQ(t->service->last_request().prompt, t->service->tokenizer().Encode("Hello world", true, true));

  j = PostJson(*t, "/v1/completions", R"({"prompt":[5,6,7],"max_tokens":3})", &status);
  ASSERT_EQ(status, 200) << j.dump();
  EXPECT_EQ(t->service->last_request().prompt, (std::vector<int32_t>{5, 6, 7}));
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(j["usage"]["prompt_tokens"], 3);
  EXPECT_EQ(j["usage"]["completion_tokens"], 3);

  auto res = t->Client().Post("/v1/completions", R"({"prompt":[[5,6,7]],"stream":true})", "application/json");
  ASSERT_TRUE(res);
  std::string text;
  for (const std::string& e : SseData(res->body)) {
    if (e == "[DONE]") continue;
    json c = json::parse(e);
    EXPECT_EQ(c["object"], "text_completion");
    text += c["choices"][0]["text"].get<std::string>();
  }
  EXPECT_EQ(text, "The weather in Paris is sunny.");
}

TEST(HttpServer, CachedTokensAndSessionHints) {
  FakeServiceOptions fake;
  fake.device_weight = 1;
  fake.host_weight = 1;
  auto t = StartTestServer(fake);
  ASSERT_TRUE(t);
  int status;
  std::string body =
      R"({"messages":[{"role":"user","content":"Tell me about Paris"}],"user":"agent-7","cache_ttl_s":12})";
  json a = PostJson(*t, "/v1/chat/completions", body, &status);
  ASSERT_EQ(status, 200);
  EXPECT_EQ(a["usage"]["prompt_tokens_details"]["cached_tokens"], 0);
  EXPECT_EQ(t->service->last_request().session_id, "agent-7");
  EXPECT_DOUBLE_EQ(t->service->last_request().cache_ttl_s, 12);
  json b = PostJson(*t, "/v1/chat/completions", body, &status, {{"X-Session-Id", "hdr-session"}});
  ASSERT_EQ(status, 200);
  int64_t prompt = b["usage"]["prompt_tokens"];
  const json& d = b["usage"]["prompt_tokens_details"];
  EXPECT_EQ(d["cached_tokens"], prompt - 1);
  EXPECT_GT(d["cached_tokens_by_tier"]["host"].get<int64_t>(), 0);
  ExpectUsageShape(b["usage"]);
  EXPECT_EQ(t->service->last_request().session_id, "hdr-session");

  auto res = t->Client().Post("/v1/sessions/agent-7/release", "", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(t->service->released_sessions(), std::vector<std::string>{"agent-7"});
}

TEST(HttpServer, Utf8IsNeverSplit) {
  FakeServiceOptions fake;
  fake.reply = "héllo 世界 🎉 ok";
  fake.token_delay_s = 0.005;  // one token per chunk
  auto t = StartTestServer(fake);
  ASSERT_TRUE(t);
  auto res = t->Client().Post("/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}],"stream":true})",
                              "application/json");
  ASSERT_TRUE(res);
  std::string content;
  int chunks = 0;
  for (const std::string& e : SseData(res->body)) {
    if (e == "[DONE]") continue;
    json c = json::parse(e);
    if (!c["choices"][0]["delta"].contains("content")) continue;
    std::string piece = c["choices"][0]["delta"]["content"];
    EXPECT_TRUE(IsValidUtf8(piece));
    EXPECT_EQ(piece.find("\xEF\xBF\xBD"), std::string::npos) << "replacement character in " << e;
    content += piece;
    ++chunks;
  }
  EXPECT_EQ(content, "héllo 世界 🎉 ok");
  EXPECT_GT(chunks, 3);
}

TEST(HttpServer, ToolCallRoundTrip) {
  FakeServiceOptions fake;
  const Tokenizer* tok = nullptr;
  fake.reply_fn = [&tok](const GenerationRequest& r) -> std::string {
    std::string prompt = tok->Decode(r.prompt, true);
    if (prompt.find("sunny") != std::string::npos) return "The weather in Paris is sunny.";
    return "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Paris\"}}\n</tool_call>";
  };
  auto t = StartTestServer(fake);
  ASSERT_TRUE(t);
  tok = &t->service->tokenizer();
  const std::string tools =
      R"([{"type":"function","function":{"name":"get_weather","description":"Weather of a city",
          "parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}])";
  int status;
  json j =
      PostJson(*t, "/v1/chat/completions",
               R"({"messages":[{"role":"user","content":"Weather in Paris?"}],"user":"agent-1","tools":)" + tools + "}",
               &status);
  ASSERT_EQ(status, 200) << j.dump();
  const json& msg = j["choices"][0]["message"];
  EXPECT_EQ(j["choices"][0]["finish_reason"], "tool_calls");
  ASSERT_EQ(msg["tool_calls"].size(), 1u) << j.dump();
  const json& call = msg["tool_calls"][0];
  EXPECT_EQ(call["type"], "function");
  EXPECT_EQ(call["function"]["name"], "get_weather");
  EXPECT_EQ(json::parse(call["function"]["arguments"].get<std::string>()), json({{"city", "Paris"}}));
  EXPECT_EQ(t->service->tool_call_sessions(), std::vector<std::string>{"agent-1"});
  std::string prompt = tok->Decode(t->service->last_request().prompt, true);
  EXPECT_NE(prompt.find("get_weather"), std::string::npos) << "tools must reach the template: " << prompt;

  // Second turn: the assistant's call and the tool's answer go back in.
  json turn2 = {{"user", "agent-1"},
                {"tools", json::parse(tools)},
                {"messages",
                 {{{"role", "user"}, {"content", "Weather in Paris?"}},
                  {{"role", "assistant"}, {"content", nullptr}, {"tool_calls", {call}}},
                  {{"role", "tool"}, {"tool_call_id", call["id"]}, {"content", "{\"weather\": \"sunny\"}"}}}}};
  j = PostJson(*t, "/v1/chat/completions", turn2.dump(), &status);
  ASSERT_EQ(status, 200) << j.dump();
  EXPECT_EQ(j["choices"][0]["message"]["content"], "The weather in Paris is sunny.");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");

  // Streaming: the call arrives as a tool_calls delta.
  auto res = t->Client().Post(
      "/v1/chat/completions",
      R"({"messages":[{"role":"user","content":"Weather in Paris?"}],"stream":true,"tools":)" + tools + "}",
      "application/json");
  ASSERT_TRUE(res);
  bool saw_call = false;
  std::string finish, streamed_args;
  for (const std::string& e : SseData(res->body)) {
    if (e == "[DONE]") continue;
    json c = json::parse(e);
    const json& ch = c["choices"][0];
    if (ch["delta"].contains("tool_calls")) {
      EXPECT_EQ(ch["delta"]["tool_calls"][0]["index"], 0);
      // The name comes once, in the call's first delta; then argument fragments.
      const json& fn = ch["delta"]["tool_calls"][0]["function"];
      if (!saw_call) {
        EXPECT_EQ(fn["name"], "get_weather");
      } else {
        EXPECT_FALSE(fn.contains("name"));
      }
      streamed_args += fn["arguments"].get<std::string>();
      saw_call = true;
    }
    if (!ch["finish_reason"].is_null()) finish = ch["finish_reason"];
  }
  EXPECT_TRUE(saw_call) << res->body;
  EXPECT_EQ(json::parse(streamed_args), json({{"city", "Paris"}}));
  EXPECT_EQ(finish, "tool_calls");
}

// The real engine is ready once serve listens; "still loading" is injected.
TEST(HttpServer, NotReadyIs503) {
  FakeServiceOptions fake;
  fake.ready = false;
  auto t = StartTestServer(fake);
  ASSERT_TRUE(t);
  auto res = t->Client().Get("/health");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  int status;
  json j = PostJson(*t, "/v1/chat/completions", kChatHi, &status);
  EXPECT_EQ(status, 503);
  EXPECT_EQ(j["error"]["type"], "server_error") << j.dump();
  t->service->set_ready(true);
  res = t->Client().Get("/health");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  PostJson(*t, "/v1/chat/completions", kChatHi, &status);
  EXPECT_EQ(status, 200);
}

}  // namespace
}  // namespace pg
