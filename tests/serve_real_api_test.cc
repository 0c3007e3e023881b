// The server's API on the real engine (`prosgrow serve` subprocess; see
// serve_real_fixture.h): the error matrix, the API key, chat and models,
// tool-call messages through the real chat template, logprobs, stop
// strings, session release, the stream format and token prompts.
// Random weights never emit a tool call by themselves: parsing a model's
// <tool_call> output into tool_calls stays tested on the fake engine
// (src/server/http_server_test.cc).
#include "bad_input_catalogue.h"
#include "serve_real_fixture.h"

namespace pg::serve_real {
namespace {

TEST_F(ServeReal, EveryErrorHasItsStatus) {
  std::vector<std::string> flags = {"--threads", "2"};
  flags.insert(flags.end(), test::kCatalogueServeFlags.begin(), test::kCatalogueServeFlags.end());
  auto s = Serve(flags, "errors");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ServeProcess& srv = **s;
  const std::vector<test::BadInput> cases = test::BadInputCatalogue();
  double invalid = 0, completions_400 = 0;
  for (const test::BadInput& c : cases) {
    invalid += c.status == 400;
    completions_400 += c.status == 400 && std::string(c.path) == "/v1/completions";
  }
  for (const test::BadInput& c : cases) {
    auto res = srv.Client()->Post(c.path, c.body, "application/json");
    ASSERT_TRUE(res) << c.name;
    EXPECT_EQ(res->status, c.status) << c.name << ": " << res->body;
    json j = json::parse(res->body, nullptr, false);
    ASSERT_TRUE(j.is_object() && j.contains("error")) << c.name << ": " << res->body;
    const json& e = j["error"];
    EXPECT_TRUE(e["message"].is_string() && e.contains("type") && e.contains("param") && e.contains("code")) << c.name;
    EXPECT_NE(e["message"].get<std::string>().find(c.message_part), std::string::npos)
        << c.name << ": " << e["message"];
  }
  auto res = srv.Client()->Get("/v1/chat/completions");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 405);
  int status;
  json ok = Post(srv, "/v1/chat/completions", kChatHi, &status);
  EXPECT_EQ(status, 200) << ok.dump();
  // Read right after the responses: every one is already counted.
  std::string m = srv.Metrics();
  EXPECT_EQ(Sample(m, "prosgrow_http_errors_total{kind=\"invalid_request\"}"), invalid) << m;
  EXPECT_EQ(Sample(m, "prosgrow_http_requests_total{endpoint=\"/v1/completions\",status=\"400\"}"), completions_400)
      << m;
  EXPECT_EQ(Sample(m, "prosgrow_http_requests_total{endpoint=\"/v1/completions\",status=\"413\"}"), 1) << m;
  EXPECT_EQ(Sample(m, "prosgrow_http_requests_total{endpoint=\"/v1/chat/completions\",status=\"200\"}"), 1) << m;
  EXPECT_EQ(Sample(m, "prosgrow_http_requests_total{endpoint=\"/v1/chat/completions\",status=\"405\"}"), 1) << m;
  EXPECT_EQ(Sample(m, "prosgrow_requests_finished_total"), 1) << m;
  EXPECT_TRUE(srv.Alive());
  EXPECT_EQ(srv.Stop(), 0) << srv.Log();
}

TEST_F(ServeReal, ApiKey) {
  auto s = Serve({"--threads", "2", "--api-key", "sk-test-123"}, "apikey");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ServeProcess& srv = **s;
  int status;
  json j = Post(srv, "/v1/chat/completions", kChatHi, &status);
  EXPECT_EQ(status, 401);
  EXPECT_EQ(j["error"]["type"], "authentication_error");
  Post(srv, "/v1/chat/completions", kChatHi, &status, {{"Authorization", "Bearer sk-test-124"}});
  EXPECT_EQ(status, 401);
  Post(srv, "/v1/chat/completions", kChatHi, &status, {{"Authorization", "Bearer "}});
  EXPECT_EQ(status, 401);
  j = Post(srv, "/v1/chat/completions", kChatHi, &status, {{"Authorization", "Bearer sk-test-123"}});
  EXPECT_EQ(status, 200) << j.dump();
  auto res = srv.Client()->Get("/v1/models");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 401);
  res = srv.Client()->Get("/health");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  // Rejected requests never reached the engine.
  EXPECT_EQ(Metric(srv, "prosgrow_requests_finished_total"), 1);
  EXPECT_EQ(srv.Stop(), 0) << srv.Log();
}

TEST_F(ServeReal, ChatAndModels) {
  int status;
  json j = Post(*shared_, "/v1/chat/completions", kChatHi, &status);
  ASSERT_EQ(status, 200) << j.dump();
  EXPECT_EQ(j["object"], "chat.completion");
  EXPECT_EQ(j["model"], "tiny");
  EXPECT_EQ(j["choices"][0]["message"]["role"], "assistant");
  EXPECT_TRUE(j["choices"][0]["message"]["content"].is_string());
  ExpectUsageShape(j["usage"]);
  auto res = shared_->Client()->Get("/v1/models");
  ASSERT_TRUE(res);
  json m = json::parse(res->body);
  EXPECT_EQ(m["data"][0]["id"], "tiny");
  EXPECT_GT(m["data"][0]["vocab_size"].get<int64_t>(), 0);
}

const char* kTools =
    R"([{"type":"function","function":{"name":"get_weather","description":"Weather of a city",
        "parameters":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]}}}])";

TEST_F(ServeReal, ToolMessagesGoThroughTheChatTemplate) {
  json user = {{"role", "user"}, {"content", "Weather in Paris?"}};
  json call = {{"id", "call_1"},
               {"type", "function"},
               {"function", {{"name", "get_weather"}, {"arguments", R"({"city": "Paris"})"}}}};
  json assistant = {{"role", "assistant"}, {"content", nullptr}, {"tool_calls", {call}}};
  json tool = {{"role", "tool"}, {"tool_call_id", "call_1"}, {"content", R"({"weather": "sunny"})"}};
  auto prompt_tokens = [&](const json& body, bool stream) -> int64_t {
    json b = body;
    b["max_tokens"] = 4;
    b["user"] = "agent-1";
    if (stream) b["stream"] = true, b["stream_options"] = {{"include_usage", true}};
    auto res = shared_->Client()->Post("/v1/chat/completions", b.dump(), "application/json");
    if (!res || res->status != 200) {
      ADD_FAILURE() << (res ? res->body : "no response");
      return -1;
    }
    json usage;
    std::string finish;
    if (stream) {
      std::vector<std::string> ev = SseData(res->body);
      EXPECT_EQ(ev.back(), "[DONE]");
      for (const std::string& e : ev) {
        if (e == "[DONE]") continue;
        json c = json::parse(e);
        if (c.contains("usage") && c["usage"].is_object()) usage = c["usage"];
        if (!c["choices"].empty() && !c["choices"][0]["finish_reason"].is_null())
          finish = c["choices"][0]["finish_reason"];
      }
    } else {
      json j = json::parse(res->body);
      usage = j["usage"];
      finish = j["choices"][0]["finish_reason"];
      EXPECT_TRUE(j["choices"][0]["message"]["content"].is_string() ||
                  j["choices"][0]["message"].contains("tool_calls"));
    }
    EXPECT_TRUE(finish == "stop" || finish == "length" || finish == "tool_calls") << finish;
    ExpectUsageShape(usage);
    return usage["prompt_tokens"].get<int64_t>();
  };
  int64_t plain = prompt_tokens({{"messages", {user}}}, false);
  int64_t with_tools = prompt_tokens({{"messages", {user}}, {"tools", json::parse(kTools)}}, false);
  int64_t round_trip = prompt_tokens({{"messages", {user, assistant, tool}}, {"tools", json::parse(kTools)}}, false);
  int64_t round_trip_stream =
      prompt_tokens({{"messages", {user, assistant, tool}}, {"tools", json::parse(kTools)}}, true);
  // The tool schema, the assistant's call and the tool's answer all reach the prompt.
  EXPECT_GT(with_tools, plain + 20);
  EXPECT_GT(round_trip, with_tools + 10);
  EXPECT_EQ(round_trip_stream, round_trip);
  // A malformed call in the history is the client's error.
  int status;
  json bad = {{"messages", {user, {{"role", "assistant"}, {"tool_calls", {{{"type", "function"}}}}}}}};
  json j = Post(*shared_, "/v1/chat/completions", bad.dump(), &status);
  EXPECT_EQ(status, 400) << j.dump();
}

TEST_F(ServeReal, LogprobsAreConsistent) {
  int status;
  json j = Post(*shared_, "/v1/chat/completions",
                R"({"messages":[{"role":"user","content":"Say something"}],"logprobs":true,"top_logprobs":5,
                    "temperature":0,"max_tokens":12,"ignore_eos":true})",
                &status);
  ASSERT_EQ(status, 200) << j.dump();
  const json& content = j["choices"][0]["logprobs"]["content"];
  ASSERT_EQ(content.size(), 12u) << j.dump();
  EXPECT_EQ(j["usage"]["completion_tokens"], 12);
  for (const json& e : content) {
    double lp = e["logprob"];
    EXPECT_LE(lp, 0.0);
    ASSERT_EQ(e["top_logprobs"].size(), 5u);
    for (size_t k = 1; k < 5; ++k) {
      EXPECT_GE(e["top_logprobs"][k - 1]["logprob"].get<double>(), e["top_logprobs"][k]["logprob"].get<double>()) << e;
    }
    // Greedy: the chosen token is the most likely one.
    EXPECT_EQ(e["top_logprobs"][0]["token"], e["token"]) << e;
    EXPECT_DOUBLE_EQ(e["top_logprobs"][0]["logprob"].get<double>(), lp);
    EXPECT_TRUE(e["bytes"].is_array());
  }
  j = Post(*shared_, "/v1/completions",
           R"({"prompt":"x","logprobs":3,"max_tokens":5,"temperature":0,"ignore_eos":true})", &status);
  ASSERT_EQ(status, 200) << j.dump();
  const json& lp = j["choices"][0]["logprobs"];
  ASSERT_EQ(lp["tokens"].size(), 5u);
  ASSERT_EQ(lp["token_logprobs"].size(), 5u);
  ASSERT_EQ(lp["top_logprobs"].size(), 5u);
  EXPECT_EQ(lp["text_offset"][0], 0);
  for (size_t i = 0; i < 5; ++i) {
    const json& top = lp["top_logprobs"][i];
    ASSERT_EQ(top.size(), 3u);
    double best = -1e30;
    for (auto it = top.begin(); it != top.end(); ++it) best = std::max(best, it.value().get<double>());
    EXPECT_LE(lp["token_logprobs"][i].get<double>(), 0.0);
    EXPECT_DOUBLE_EQ(lp["token_logprobs"][i].get<double>(), best) << top;
  }
}

TEST_F(ServeReal, StopStringsTruncate) {
  const std::string base = R"({"prompt":"The story begins","temperature":0,"ignore_eos":true,"max_tokens":48)";
  int status;
  json first = Post(*shared_, "/v1/completions", base + "}", &status);
  ASSERT_EQ(status, 200) << first.dump();
  const std::string text = first["choices"][0]["text"];
  ASSERT_GE(text.size(), 12u) << text;
  // A stop string known to occur: three bytes from the middle of the output,
  // cut at its first occurrence (kept on UTF-8 boundaries).
  size_t at = text.size() / 2;
  while (at > 0 && (static_cast<unsigned char>(text[at]) & 0xC0) == 0x80) --at;
  size_t len = 3;
  while (at + len < text.size() && (static_cast<unsigned char>(text[at + len]) & 0xC0) == 0x80) ++len;
  const std::string stop = text.substr(at, len);
  const std::string expect = text.substr(0, text.find(stop));
  json req = json::parse(base + "}");
  req["stop"] = {"\x01never", stop};
  json second = Post(*shared_, "/v1/completions", req.dump(), &status);
  ASSERT_EQ(status, 200) << second.dump();
  EXPECT_EQ(second["choices"][0]["text"], expect) << "stop " << json(stop).dump() << " in " << json(text).dump();
  EXPECT_EQ(second["choices"][0]["finish_reason"], "stop");
  EXPECT_LT(second["usage"]["completion_tokens"].get<int64_t>(), 48);
  // The same through a stream.
  req["stream"] = true;
  auto res = shared_->Client()->Post("/v1/completions", req.dump(), "application/json");
  ASSERT_TRUE(res);
  std::string streamed, finish;
  for (const std::string& e : SseData(res->body)) {
    if (e == "[DONE]") continue;
    json c = json::parse(e);
    streamed += c["choices"][0]["text"].get<std::string>();
    if (!c["choices"][0]["finish_reason"].is_null()) finish = c["choices"][0]["finish_reason"];
  }
  EXPECT_EQ(streamed, expect);
  EXPECT_EQ(finish, "stop");
  // The cut request was cancelled in the engine: nothing keeps running.
  std::string m = shared_->Metrics();
  EXPECT_EQ(Sample(m, "prosgrow_running_sequences"), 0) << m;
  EXPECT_EQ(Sample(m, kDevicePinned), 0) << m;
}

TEST_F(ServeReal, SessionRelease) {
  int status;
  json j = Post(*shared_, "/v1/chat/completions",
                R"({"messages":[{"role":"user","content":"Remember me"}],"user":"agent-7","max_tokens":4})", &status);
  ASSERT_EQ(status, 200) << j.dump();
  j = Post(*shared_, "/v1/sessions/agent-7/release", "", &status);
  EXPECT_EQ(status, 200) << j.dump();
  EXPECT_EQ(j["id"], "agent-7");
  EXPECT_EQ(j["released"], true);
  // Releasing an unknown session is harmless; the method is checked.
  Post(*shared_, "/v1/sessions/nobody/release", "", &status);
  EXPECT_EQ(status, 200);
  auto res = shared_->Client()->Get("/v1/sessions/agent-7/release");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 405);
  j = Post(*shared_, "/v1/chat/completions", kChatHi, &status);
  EXPECT_EQ(status, 200);
}

TEST_F(ServeReal, StreamFormat) {
  auto res = shared_->Client()->Post("/v1/chat/completions",
                                     R"({"messages":[{"role":"user","content":"Hi"}],"stream":true,"max_tokens":6,
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
  std::string finish;
  for (size_t i = 0; i + 2 < events.size(); ++i) {
    json c = json::parse(events[i]);
    EXPECT_TRUE(c.contains("usage") && c["usage"].is_null()) << events[i];
    if (!c["choices"][0]["finish_reason"].is_null()) finish = c["choices"][0]["finish_reason"];
  }
  EXPECT_TRUE(finish == "stop" || finish == "length") << finish;
  json usage_chunk = json::parse(events[events.size() - 2]);
  EXPECT_TRUE(usage_chunk["choices"].empty());
  ExpectUsageShape(usage_chunk["usage"]);
  // Without include_usage there is no usage anywhere.
  res = shared_->Client()->Post("/v1/chat/completions",
                                R"({"messages":[{"role":"user","content":"Hi"}],"stream":true,"max_tokens":4})",
                                "application/json");
  ASSERT_TRUE(res);
  for (const std::string& e : SseData(res->body)) {
    if (e == "[DONE]") continue;
    json c = json::parse(e);
    EXPECT_FALSE(c.contains("usage")) << e;
    EXPECT_EQ(c["choices"].size(), 1u);
  }
}

TEST_F(ServeReal, TokenPromptsAndModelIds) {
  int status;
  json j = Post(*shared_, "/v1/completions", R"({"prompt":[5,6,7],"max_tokens":3,"ignore_eos":true})", &status);
  ASSERT_EQ(status, 200) << j.dump();
  EXPECT_EQ(j["object"], "text_completion");
  EXPECT_EQ(j["choices"][0]["finish_reason"], "length");
  EXPECT_EQ(j["usage"]["prompt_tokens"], 3);
  EXPECT_EQ(j["usage"]["completion_tokens"], 3);
  j = Post(*shared_, "/v1/completions", R"({"prompt":[[5,6,7]],"max_tokens":2,"ignore_eos":true})", &status);
  ASSERT_EQ(status, 200) << j.dump();
  EXPECT_EQ(j["usage"]["prompt_tokens"], 3);
  auto res = shared_->Client()->Get("/v1/models/tiny");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  res = shared_->Client()->Get("/v1/models/other");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 404);
  EXPECT_EQ(json::parse(res->body)["error"]["code"], "model_not_found");
}

}  // namespace
}  // namespace pg::serve_real
