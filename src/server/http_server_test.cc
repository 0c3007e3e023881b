// Integration tests: HttpServer over FakeInferenceService on a loopback port.
#include "server/http_server.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <thread>

#include "base/clock.h"
#include "server/stop_string_filter.h"
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

template <typename Pred>
bool WaitFor(Pred pred, double timeout_s = 5) {
  double end = NowSeconds() + timeout_s;
  while (NowSeconds() < end) {
    if (pred()) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return pred();
}

void ExpectUsageShape(const json& usage) {
  ASSERT_TRUE(usage.is_object()) << usage.dump();
  EXPECT_EQ(usage["total_tokens"], usage["prompt_tokens"].get<int64_t>() + usage["completion_tokens"].get<int64_t>());
  const json& d = usage["prompt_tokens_details"];
  ASSERT_TRUE(d["cached_tokens"].is_number_integer()) << usage.dump();
  const json& tiers = d["cached_tokens_by_tier"];
  EXPECT_EQ(d["cached_tokens"], tiers["device"].get<int64_t>() + tiers["host"].get<int64_t>() +
                                    tiers["disk"].get<int64_t>());
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

TEST(HttpServer, ChatStreamingWithUsage) {
  auto t = StartTestServer();
  ASSERT_TRUE(t);
  auto cli = t->Client();
  auto res = cli.Post("/v1/chat/completions",
                      R"({"messages":[{"role":"user","content":"Hi"}],"stream":true,
                          "stream_options":{"include_usage":true}})",
                      "application/json");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200) << res->body;
  EXPECT_NE(res->get_header_value("Content-Type").find("text/event-stream"), std::string::npos);
  std::vector<std::string> events = SseData(res->body);
  ASSERT_GE(events.size(), 4u) << res->body;
  EXPECT_EQ(events.back(), "[DONE]");
  json first = json::parse(events[0]);
  EXPECT_EQ(first["object"], "chat.completion.chunk");
  EXPECT_EQ(first["choices"][0]["delta"]["role"], "assistant");
  std::string content;
  std::string finish;
  for (size_t i = 0; i + 2 < events.size(); ++i) {
    json c = json::parse(events[i]);
    EXPECT_TRUE(c.contains("usage") && c["usage"].is_null()) << events[i];
    const json& ch = c["choices"][0];
    if (ch["delta"].contains("content")) content += ch["delta"]["content"].get<std::string>();
    if (!ch["finish_reason"].is_null()) finish = ch["finish_reason"];
  }
  EXPECT_EQ(content, "Hello from the fake engine!");
  EXPECT_EQ(finish, "stop");
  json usage_chunk = json::parse(events[events.size() - 2]);
  EXPECT_TRUE(usage_chunk["choices"].empty());
  ExpectUsageShape(usage_chunk["usage"]);
  EXPECT_EQ(usage_chunk["usage"]["completion_tokens"], ReplyTokens(*t, "Hello from the fake engine!") + 1);
}

TEST(HttpServer, StreamingWithoutUsageOmitsIt) {
  auto t = StartTestServer();
  ASSERT_TRUE(t);
  auto res = t->Client().Post("/v1/chat/completions",
                              R"({"messages":[{"role":"user","content":"Hi"}],"stream":true})", "application/json");
  ASSERT_TRUE(res);
  for (const std::string& e : SseData(res->body)) {
    if (e == "[DONE]") continue;
    json c = json::parse(e);
    EXPECT_FALSE(c.contains("usage")) << e;
    EXPECT_EQ(c["choices"].size(), 1u);
  }
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
  std::string body = R"({"messages":[{"role":"user","content":"Tell me about Paris"}],"user":"agent-7","cache_ttl_s":12})";
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
  auto res = t->Client().Post("/v1/chat/completions",
                              R"({"messages":[{"role":"user","content":"x"}],"stream":true})", "application/json");
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

TEST(HttpServer, StopStringsTruncateAndCancel) {
  FakeServiceOptions fake;
  fake.token_delay_s = 0.002;
  auto t = StartTestServer(fake);
  ASSERT_TRUE(t);
  int status;
  json j = PostJson(*t, "/v1/chat/completions",
                    R"({"messages":[{"role":"user","content":"x"}],"stop":"fake","ignore_eos":true,"max_tokens":500})",
                    &status);
  ASSERT_EQ(status, 200) << j.dump();
  EXPECT_EQ(j["choices"][0]["message"]["content"], "Hello from the ");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "stop");
  EXPECT_LT(j["usage"]["completion_tokens"].get<int64_t>(), ReplyTokens(*t, "Hello from the fake engine!"));
  EXPECT_TRUE(WaitFor([&] { return t->service->cancelled_count() == 1; }));

  auto res = t->Client().Post("/v1/completions",
                              R"({"prompt":"x","stop":["zzz","engine"],"stream":true,"ignore_eos":true,"max_tokens":500})",
                              "application/json");
  ASSERT_TRUE(res);
  std::string text, finish;
  for (const std::string& e : SseData(res->body)) {
    if (e == "[DONE]") continue;
    json c = json::parse(e);
    text += c["choices"][0]["text"].get<std::string>();
    if (!c["choices"][0]["finish_reason"].is_null()) finish = c["choices"][0]["finish_reason"];
  }
  EXPECT_EQ(text, "Hello from the fake ");
  EXPECT_EQ(finish, "stop");
}

TEST(HttpServer, LogprobsShape) {
  auto t = StartTestServer();
  ASSERT_TRUE(t);
  int status;
  json j = PostJson(*t, "/v1/chat/completions",
                    R"({"messages":[{"role":"user","content":"x"}],"logprobs":true,"top_logprobs":3})", &status);
  ASSERT_EQ(status, 200) << j.dump();
  const json& content = j["choices"][0]["logprobs"]["content"];
  ASSERT_TRUE(content.is_array());
  EXPECT_EQ(static_cast<int64_t>(content.size()), ReplyTokens(*t, "Hello from the fake engine!"));
  std::string joined;
  for (const json& e : content) {
    EXPECT_TRUE(e["token"].is_string());
    EXPECT_LE(e["logprob"].get<double>(), 0.0);
    EXPECT_TRUE(e["bytes"].is_array());
    ASSERT_EQ(e["top_logprobs"].size(), 3u);
    EXPECT_EQ(e["top_logprobs"][0]["token"], e["token"]);
    joined += e["token"].get<std::string>();
  }
  EXPECT_EQ(joined, "Hello from the fake engine!");

  j = PostJson(*t, "/v1/completions", R"({"prompt":"x","logprobs":2,"max_tokens":5})", &status);
  ASSERT_EQ(status, 200) << j.dump();
  const json& lp = j["choices"][0]["logprobs"];
  ASSERT_EQ(lp["tokens"].size(), 5u);
  EXPECT_EQ(lp["token_logprobs"].size(), 5u);
  EXPECT_EQ(lp["text_offset"].size(), 5u);
  ASSERT_EQ(lp["top_logprobs"].size(), 5u);
  EXPECT_TRUE(lp["top_logprobs"][0].is_object());
  EXPECT_EQ(lp["text_offset"][0], 0);
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
  json j = PostJson(*t, "/v1/chat/completions",
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
  std::string finish;
  for (const std::string& e : SseData(res->body)) {
    if (e == "[DONE]") continue;
    json c = json::parse(e);
    const json& ch = c["choices"][0];
    if (ch["delta"].contains("tool_calls")) {
      saw_call = true;
      EXPECT_EQ(ch["delta"]["tool_calls"][0]["index"], 0);
      EXPECT_EQ(ch["delta"]["tool_calls"][0]["function"]["name"], "get_weather");
    }
    if (!ch["finish_reason"].is_null()) finish = ch["finish_reason"];
  }
  EXPECT_TRUE(saw_call) << res->body;
  EXPECT_EQ(finish, "tool_calls");
}

struct ErrorCase {
  const char* name;
  const char* path;
  std::string body;
  int status;
  const char* message_part;  // must appear in error.message
};

TEST(HttpServer, EveryErrorHasItsStatus) {
  FakeServiceOptions fake;
  fake.n_ctx = 256;
  ServerOptions opts;
  opts.max_body_bytes = 64 << 10;
  auto t = StartTestServer(fake, opts);
  ASSERT_TRUE(t);
  std::string long_prompt;
  for (int i = 0; i < 400; ++i) long_prompt += "word" + std::to_string(i) + " ";
  const ErrorCase cases[] = {
      {"malformed json", "/v1/chat/completions", "{\"messages\": [", 400, "not valid JSON"},
      {"not an object", "/v1/chat/completions", "[1,2,3]", 400, "JSON object"},
      {"wrong type", "/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}],"temperature":"hot"})", 400, "temperature"},
      {"negative max_tokens", "/v1/completions", R"({"prompt":"x","max_tokens":-3})", 400, "max_tokens"},
      {"absurd max_tokens", "/v1/completions", R"({"prompt":"x","max_tokens":1000000000})", 400, "max_tokens"},
      {"temperature < 0", "/v1/completions", R"({"prompt":"x","temperature":-1})", 400, "temperature"},
      {"top_p 0", "/v1/completions", R"({"prompt":"x","top_p":0})", 400, "top_p"},
      {"top_p > 1", "/v1/completions", R"({"prompt":"x","top_p":1.5})", 400, "top_p"},
      {"n > 1", "/v1/chat/completions", R"({"messages":[{"role":"user","content":"x"}],"n":3})", 400, "'n'"},
      {"empty messages", "/v1/chat/completions", R"({"messages":[]})", 400, "messages"},
      {"bad role", "/v1/chat/completions", R"({"messages":[{"role":"robot","content":"x"}]})", 400, "role"},
      {"token out of vocab", "/v1/completions", R"({"prompt":[1,2,99999999]})", 400, "vocabulary"},
      {"negative token", "/v1/completions", R"({"prompt":[-4]})", 400, "vocabulary"},
      {"invalid utf-8", "/v1/completions", "{\"prompt\":\"caf\xe9\"}", 400, "UTF-8"},
      {"prompt too long", "/v1/completions", R"({"prompt":")" + long_prompt + R"("})", 400, "context is 256 tokens"},
      {"prompt + max_tokens too long", "/v1/completions", R"({"prompt":"hi","max_tokens":256})", 400, "lower max_tokens"},
      {"unknown model", "/v1/chat/completions", R"({"model":"gpt-9","messages":[{"role":"user","content":"x"}]})", 404, "gpt-9"},
      {"unknown route", "/v1/embeddings", R"({"input":"x"})", 404, "no route"},
      {"oversized body", "/v1/completions", R"({"prompt":")" + std::string(100 << 10, 'a') + R"("})", 413, "larger than"},
  };
  for (const ErrorCase& c : cases) {
    auto res = t->Client().Post(c.path, c.body, "application/json");
    ASSERT_TRUE(res) << c.name;
    EXPECT_EQ(res->status, c.status) << c.name << ": " << res->body;
    json j = json::parse(res->body, nullptr, false);
    ASSERT_TRUE(j.is_object() && j.contains("error")) << c.name << ": " << res->body;
    const json& e = j["error"];
    EXPECT_TRUE(e["message"].is_string() && e.contains("type") && e.contains("param") && e.contains("code")) << c.name;
    EXPECT_NE(e["message"].get<std::string>().find(c.message_part), std::string::npos)
        << c.name << ": " << e["message"];
  }
  // Wrong method.
  auto res = t->Client().Get("/v1/chat/completions");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 405);
  // The server is still healthy after all that.
  int status;
  PostJson(*t, "/v1/chat/completions", kChatHi, &status);
  EXPECT_EQ(status, 200);
  // Errors are counted by kind.
  res = t->Client().Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_NE(res->body.find("prosgrow_http_errors_total{kind=\"invalid_request\"} 16"), std::string::npos) << res->body;
}

TEST(HttpServer, ApiKey) {
  ServerOptions opts;
  opts.api_key = "sk-test-123";
  auto t = StartTestServer({}, opts);
  ASSERT_TRUE(t);
  int status;
  json j = PostJson(*t, "/v1/chat/completions", kChatHi, &status);
  EXPECT_EQ(status, 401);
  EXPECT_EQ(j["error"]["type"], "authentication_error");
  PostJson(*t, "/v1/chat/completions", kChatHi, &status, {{"Authorization", "Bearer sk-test-124"}});
  EXPECT_EQ(status, 401);
  PostJson(*t, "/v1/chat/completions", kChatHi, &status, {{"Authorization", "Bearer "}});
  EXPECT_EQ(status, 401);
  PostJson(*t, "/v1/chat/completions", kChatHi, &status, {{"Authorization", "Bearer sk-test-123"}});
  EXPECT_EQ(status, 200);
  auto res = t->Client().Get("/v1/models");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  res = t->Client().Get("/health");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
}

TEST(HttpServer, QueueFullIs429AndNotReadyIs503) {
  FakeServiceOptions fake;
  fake.max_queue = 0;
  fake.ready = false;
  auto t = StartTestServer(fake);
  ASSERT_TRUE(t);
  auto res = t->Client().Get("/health");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 503);
  int status;
  PostJson(*t, "/v1/chat/completions", kChatHi, &status);
  EXPECT_EQ(status, 503);
  t->service->set_ready(true);
  res = t->Client().Get("/health");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  json j = PostJson(*t, "/v1/chat/completions", kChatHi, &status);
  EXPECT_EQ(status, 429);
  EXPECT_EQ(j["error"]["type"], "rate_limit_error");
}

TEST(HttpServer, Models) {
  auto t = StartTestServer();
  ASSERT_TRUE(t);
  auto res = t->Client().Get("/v1/models");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  json j = json::parse(res->body);
  EXPECT_EQ(j["object"], "list");
  EXPECT_EQ(j["data"][0]["id"], "fake-model");
  EXPECT_EQ(j["data"][0]["vocab_size"], t->service->tokenizer().n_vocab());
  EXPECT_EQ(j["data"][0]["context_length"], 2048);
  res = t->Client().Get("/v1/models/fake-model");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  res = t->Client().Get("/v1/models/other");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
}

// Sends a request on a raw socket, reads the first bytes of the answer, and
// hangs up. The fake must see the request cancelled.
void DisconnectMidway(bool stream) {
  FakeServiceOptions fake;
  fake.token_delay_s = 0.01;
  auto t = StartTestServer(fake);
  ASSERT_TRUE(t);
  int fd = ConnectLoopback(t->port);
  ASSERT_GE(fd, 0);
  std::string body = std::string(R"({"messages":[{"role":"user","content":"x"}],"ignore_eos":true,"max_tokens":1500,"stream":)") +
                     (stream ? "true" : "false") + "}";
  ASSERT_TRUE(SendAll(fd, PostText("/v1/chat/completions", body)));
  if (stream) {
    std::string got = ReadUntil(fd, "\"content\":\"", 5);
    ASSERT_NE(got.find("200 OK"), std::string::npos) << got;
  } else {
    ASSERT_TRUE(WaitFor([&] { return t->service->running_count() == 1; }));
  }
  ::close(fd);
  EXPECT_TRUE(WaitFor([&] { return t->service->cancelled_count() == 1; }, 3));
  EXPECT_TRUE(WaitFor([&] { return t->service->running_count() == 0; }, 3));
  auto res = t->Client().Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_NE(res->body.find("prosgrow_fake_cancelled_total 1"), std::string::npos) << res->body;
  EXPECT_NE(res->body.find("prosgrow_http_client_disconnects_total{endpoint=\"chat\"} 1"), std::string::npos)
      << res->body;
}

TEST(HttpServer, StreamingDisconnectCancels) { DisconnectMidway(true); }
TEST(HttpServer, NonStreamingDisconnectCancels) { DisconnectMidway(false); }

TEST(HttpServer, SixtyFourConcurrentStreams) {
  FakeServiceOptions fake;
  fake.token_delay_s = 0.002;
  fake.reply_fn = [](const GenerationRequest& r) { return "reply to " + std::to_string(r.prompt.size()); };
  ServerOptions opts;
  opts.threads = 96;
  auto t = StartTestServer(fake, opts);
  ASSERT_TRUE(t);
  constexpr int kStreams = 64;
  std::atomic<int> ok{0};
  std::vector<std::string> failures(kStreams);
  std::vector<std::thread> clients;
  for (int i = 0; i < kStreams; ++i) {
    clients.emplace_back([&, i] {
      std::string user_text(static_cast<size_t>(i + 1), 'a');
      json body = {{"messages", {{{"role", "user"}, {"content", user_text}}}},
                   {"stream", true},
                   {"stream_options", {{"include_usage", true}}}};
      auto res = t->Client(60).Post("/v1/chat/completions", body.dump(), "application/json");
      if (!res || res->status != 200) {
        failures[i] = res ? "status " + std::to_string(res->status) + ": " + res->body
                          : "request failed: " + httplib::to_string(res.error());
        return;
      }
      std::vector<std::string> ev = SseData(res->body);
      if (ev.size() < 3 || ev.back() != "[DONE]") {
        failures[i] = "bad stream: " + res->body;
        return;
      }
      std::string content;
      for (size_t k = 0; k + 2 < ev.size(); ++k) {
        json c = json::parse(ev[k]);
        if (c["choices"][0]["delta"].contains("content")) content += c["choices"][0]["delta"]["content"].get<std::string>();
      }
      json usage = json::parse(ev[ev.size() - 2])["usage"];
      int64_t prompt = usage["prompt_tokens"];
      std::string expect = "reply to " + std::to_string(prompt);
      int64_t expect_completion = static_cast<int64_t>(t->service->tokenizer().Encode(expect, false, true).size()) + 1;
      if (content != expect || usage["completion_tokens"] != expect_completion ||
          usage["total_tokens"] != prompt + expect_completion) {
        failures[i] = "content '" + content + "' usage " + usage.dump();
        return;
      }
      ok.fetch_add(1);
    });
  }
  for (auto& c : clients) c.join();
  for (int i = 0; i < kStreams; ++i) EXPECT_TRUE(failures[i].empty()) << "stream " << i << ": " << failures[i];
  EXPECT_EQ(ok.load(), kStreams);
  auto res = t->Client().Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_NE(res->body.find("prosgrow_http_requests_total{endpoint=\"/v1/chat/completions\",status=\"200\"} 64"),
            std::string::npos)
      << res->body;
  EXPECT_NE(res->body.find("prosgrow_time_to_first_token_seconds_count 64"), std::string::npos);
}

TEST(HttpServer, MetricsPassPromtool) {
  if (access("/usr/bin/promtool", X_OK) != 0) GTEST_SKIP() << "promtool not installed";
  auto t = StartTestServer();
  ASSERT_TRUE(t);
  int status;
  PostJson(*t, "/v1/chat/completions", kChatHi, &status);
  PostJson(*t, "/v1/completions", "{}", &status);
  auto res = t->Client().Get("/metrics");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  EXPECT_NE(res->get_header_value("Content-Type").find("text/plain"), std::string::npos);
  for (const char* name : {"prosgrow_time_to_first_token_seconds_bucket", "prosgrow_inter_token_latency_seconds_bucket",
                           "prosgrow_request_latency_seconds_bucket", "prosgrow_prompt_tokens_total",
                           "prosgrow_completion_tokens_total", "prosgrow_fake_running_sequences"}) {
    EXPECT_NE(res->body.find(name), std::string::npos) << name;
  }
  std::string path = ::testing::TempDir() + "/prosgrow_metrics.txt";
  {
    std::ofstream out(path);
    out << res->body;
  }
  std::string cmd = "/usr/bin/promtool check metrics < " + path + " 2>&1";
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  std::string output;
  char buf[512];
  while (fgets(buf, sizeof(buf), p)) output += buf;
  int rc = pclose(p);
  EXPECT_EQ(rc, 0) << output << "\n" << res->body;
}

TEST(HttpServer, SlowHeadersAreCutOff) {
  ServerOptions opts;
  opts.header_timeout_s = 1;
  auto t = StartTestServer({}, opts);
  ASSERT_TRUE(t);
  int fd = ConnectLoopback(t->port);
  ASSERT_GE(fd, 0);
  double start = NowSeconds();
  ASSERT_TRUE(SendAll(fd, "POST /v1/completions HTTP/1.1\r\nHost: x\r\n"));
  // Trickle a header byte at a time, never finishing.
  std::string got;
  for (int i = 0; i < 40 && got.empty(); ++i) {
    SendAll(fd, "X");
    got = ReadUntil(fd, "\r\n\r\n", 0.1);
  }
  double elapsed = NowSeconds() - start;
  ::close(fd);
  EXPECT_LT(elapsed, 3.0);
  EXPECT_NE(got.find("400"), std::string::npos) << got;
}

TEST(HttpServer, OversizedHeadersAreRejected) {
  auto t = StartTestServer();
  ASSERT_TRUE(t);
  int fd = ConnectLoopback(t->port);
  ASSERT_GE(fd, 0);
  std::string req = "GET /health HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 200; ++i) req += "X-Filler-" + std::to_string(i) + ": " + std::string(1000, 'f') + "\r\n";
  req += "\r\n";
  // Send from another thread: the server stops reading at its limit, so
  // the send may block until the socket is shut down.
  std::thread sender([fd, req] { SendAll(fd, req); });
  std::string got = ReadUntil(fd, "\r\n\r\n", 5);
  ::shutdown(fd, SHUT_RDWR);
  sender.join();
  ::close(fd);
  EXPECT_NE(got.find("400"), std::string::npos) << got.substr(0, 200);
}

}  // namespace
}  // namespace pg
