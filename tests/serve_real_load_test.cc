// The real server under load and misbehaving clients (`prosgrow serve`
// subprocess; see serve_real_fixture.h): 429 on a full queue, disconnects
// freeing KV, every request accounted on /metrics before its response
// completes, 64 concurrent streams, header guards, promtool on /metrics and
// the OpenAI Node SDK.
#include "serve_real_fixture.h"

namespace pg::serve_real {
namespace {

// Opens a stream on a raw socket and reads until the first content chunk:
// the sequence is then admitted and running. Returns the socket (or -1).
int OpenRunningStream(int port, const std::string& body) {
  int fd = testing::ConnectLoopback(port);
  if (fd < 0) return -1;
  if (!testing::SendAll(fd, testing::PostText("/v1/completions", body))) return -1;
  std::string got = testing::ReadUntil(fd, "\"text\":\"", 120);
  if (got.find("200 OK") == std::string::npos) {
    ADD_FAILURE() << "stream did not start: " << got;
    ::close(fd);
    return -1;
  }
  return fd;
}

// A request that runs until its client leaves: ignore_eos and max_tokens
// up to the context (thousands of tokens, far longer than the test's
// requests around it take).
const char* kLongStream = R"({"prompt":"tell me a long story","ignore_eos":true,"max_tokens":4000,"stream":true})";

TEST_F(ServeReal, QueueFullIs429) {
  // The queue bound counts every admitted, unfinished request: with
  // --max-queue 1 one long request fills it.
  auto s = Serve({"--threads", "2", "--max-queue", "1"}, "queue");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ServeProcess& srv = **s;
  int fd = OpenRunningStream(srv.port(), kLongStream);
  ASSERT_GE(fd, 0);
  int status;
  json j = Post(srv, "/v1/chat/completions", kChatHi, &status);
  EXPECT_EQ(status, 429) << j.dump();
  EXPECT_EQ(j["error"]["type"], "rate_limit_error");
  EXPECT_EQ(Metric(srv, "prosgrow_http_requests_total{endpoint=\"/v1/chat/completions\",status=\"429\"}"), 1);
  // The first request is still generating: the 429 was the queue, not an end.
  EXPECT_EQ(Metric(srv, "prosgrow_requests_finished_total"), 0);
  ::close(fd);
  // Once it is gone the queue has room again.
  ASSERT_TRUE(WaitUntil([&] { return Metric(srv, "prosgrow_requests_finished_total") == 1; }));
  j = Post(srv, "/v1/chat/completions", kChatHi, &status);
  EXPECT_EQ(status, 200) << j.dump();
  EXPECT_EQ(srv.Stop(), 0) << srv.Log();
}

// A client that hangs up mid-generation frees its sequence's KV: the
// device tier's pinned blocks and the running count go back to zero.
void DisconnectFreesKv(ServeProcess& srv, bool stream) {
  double disconnects = Sample(srv.Metrics(), "prosgrow_http_client_disconnects_total{endpoint=\"chat\"}").value_or(0);
  std::string body =
      std::string(R"({"messages":[{"role":"user","content":"x"}],"ignore_eos":true,"max_tokens":4000,"stream":)") +
      (stream ? "true" : "false") + "}";
  int fd = testing::ConnectLoopback(srv.port());
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(testing::SendAll(fd, testing::PostText("/v1/chat/completions", body)));
  if (stream) {
    std::string got = testing::ReadUntil(fd, "\"content\":\"", 120);
    ASSERT_NE(got.find("200 OK"), std::string::npos) << got;
  }
  ASSERT_TRUE(WaitUntil([&] {
    std::string m = srv.Metrics();
    return Sample(m, "prosgrow_running_sequences") == 1 && Sample(m, kDevicePinned) > 0;
  })) << srv.Metrics();
  ::close(fd);
  EXPECT_TRUE(WaitUntil([&] {
    std::string m = srv.Metrics();
    return Sample(m, "prosgrow_running_sequences") == 0 && Sample(m, kDevicePinned) == 0 &&
           Sample(m, "prosgrow_http_client_disconnects_total{endpoint=\"chat\"}") == disconnects + 1;
  })) << srv.Metrics();
  EXPECT_EQ(Metric(srv, "prosgrow_http_generations_in_flight"), 0);
}

TEST_F(ServeReal, StreamingDisconnectFreesKv) { DisconnectFreesKv(*shared_, true); }
TEST_F(ServeReal, NonStreamingDisconnectFreesKv) { DisconnectFreesKv(*shared_, false); }

TEST_F(ServeReal, FinishedRequestIsAccountedBeforeItsResponse) {
  // Nothing of a finished request is left on /metrics once the client has
  // its answer: no pinned KV, nothing running, nothing in flight.
  for (int i = 0; i < 5; ++i) {
    for (bool stream : {false, true}) {
      std::string m0 = shared_->Metrics();
      int status;
      json body = {{"prompt", "count " + std::to_string(i)}, {"max_tokens", 6}, {"stream", stream}};
      auto res = shared_->Client()->Post("/v1/completions", body.dump(), "application/json");
      ASSERT_TRUE(res);
      status = res->status;
      ASSERT_EQ(status, 200) << res->body;
      std::string m = shared_->Metrics();
      EXPECT_EQ(Sample(m, kDevicePinned), 0) << m;
      EXPECT_EQ(Sample(m, "prosgrow_running_sequences"), 0) << m;
      EXPECT_EQ(Sample(m, "prosgrow_http_generations_in_flight"), 0) << m;
      EXPECT_EQ(Sample(m, "prosgrow_requests_finished_total").value_or(-1),
                Sample(m0, "prosgrow_requests_finished_total").value_or(-1) + 1);
      const std::string ok = "prosgrow_http_requests_total{endpoint=\"/v1/completions\",status=\"200\"}";
      EXPECT_EQ(Sample(m, ok).value_or(-1), Sample(m0, ok).value_or(0) + 1) << m;
    }
  }
}

TEST_F(ServeReal, SixtyFourConcurrentStreams) {
  constexpr int kStreams = 64;
  const std::string ok_series = "prosgrow_http_requests_total{endpoint=\"/v1/chat/completions\",status=\"200\"}";
  std::string m0 = shared_->Metrics();
  std::vector<std::string> failures(kStreams);
  std::vector<std::thread> clients;
  std::atomic<int> ok{0};
  for (int i = 0; i < kStreams; ++i) {
    clients.emplace_back([&, i] {
      json body = {{"messages", {{{"role", "user"}, {"content", "stream number " + std::to_string(i)}}}},
                   {"stream", true},
                   {"max_tokens", 8},
                   {"ignore_eos", true},
                   {"stream_options", {{"include_usage", true}}}};
      auto res = shared_->Client(300)->Post("/v1/chat/completions", body.dump(), "application/json");
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
      json usage = json::parse(ev[ev.size() - 2])["usage"];
      if (usage["completion_tokens"] != 8 || usage["total_tokens"] != usage["prompt_tokens"].get<int64_t>() + 8) {
        failures[i] = "usage " + usage.dump();
        return;
      }
      ok.fetch_add(1);
    });
  }
  for (auto& c : clients) c.join();
  for (int i = 0; i < kStreams; ++i) EXPECT_TRUE(failures[i].empty()) << "stream " << i << ": " << failures[i];
  EXPECT_EQ(ok.load(), kStreams);
  // Every stream is counted by the time its client has it.
  std::string m = shared_->Metrics();
  EXPECT_EQ(Sample(m, ok_series).value_or(-1), Sample(m0, ok_series).value_or(0) + kStreams) << m;
  EXPECT_EQ(Sample(m, "prosgrow_requests_finished_total").value_or(-1),
            Sample(m0, "prosgrow_requests_finished_total").value_or(0) + kStreams);
  EXPECT_EQ(Sample(m, "prosgrow_completion_tokens_total").value_or(-1),
            Sample(m0, "prosgrow_completion_tokens_total").value_or(0) + 8 * kStreams);
  EXPECT_EQ(Sample(m, "prosgrow_time_to_first_token_seconds_count").value_or(-1),
            Sample(m0, "prosgrow_time_to_first_token_seconds_count").value_or(0) + kStreams);
  EXPECT_EQ(Sample(m, kDevicePinned), 0) << m;
  EXPECT_EQ(Sample(m, "prosgrow_running_sequences"), 0) << m;
}

// --prefill-slice through the real server: a long prompt and short ones sent
// together (the long one advancing in slices of 4 beside the others' decodes
// once it has more than 8 tokens left) answer exactly as each does alone.
TEST_F(ServeReal, SlicedLongPrefillAnswersAsAlone) {
  auto s =
      Serve({"--threads", "2", "--no-prefix-cache", "--prefill-slice", "4", "--long-prefill-threshold", "8"}, "slices");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ServeProcess& srv = **s;
  std::vector<std::string> prompts = {
      "an agent returns to the same long context after every tool call, so the "
      "server keeps that context and lets a returning conversation find it again; "
      "the long prompt of this test is this sentence, told twice over: an agent "
      "returns to the same long context after every tool call"};
  for (int i = 0; i < 4; ++i) prompts.push_back("short turn " + std::to_string(i));
  auto complete = [&](const std::string& prompt) {
    json body = {{"prompt", prompt}, {"max_tokens", 8}, {"temperature", 0}, {"ignore_eos", true}};
    int status;
    json j = Post(srv, "/v1/completions", body.dump(), &status);
    return status == 200 ? j["choices"][0]["text"].get<std::string>() : "status " + std::to_string(status);
  };
  std::vector<std::string> together(prompts.size());
  std::vector<std::thread> clients;
  for (size_t i = 0; i < prompts.size(); ++i) clients.emplace_back([&, i] { together[i] = complete(prompts[i]); });
  for (auto& c : clients) c.join();
  for (size_t i = 0; i < prompts.size(); ++i) EXPECT_EQ(together[i], complete(prompts[i])) << "prompt " << i;
  EXPECT_EQ(srv.Stop(), 0) << srv.Log();
}

TEST_F(ServeReal, SlowHeadersAreCutOff) {
  int fd = testing::ConnectLoopback(shared_->port());
  ASSERT_GE(fd, 0);
  ASSERT_TRUE(testing::SendAll(fd, "POST /v1/completions HTTP/1.1\r\nHost: x\r\n"));
  // Trickle a header byte at a time, never finishing, until the server's
  // header deadline answers (whenever that is; no timing is asserted).
  std::string got;
  for (int i = 0; i < 1200 && got.empty(); ++i) {
    if (!testing::SendAll(fd, "X")) break;
    got = testing::ReadUntil(fd, "\r\n\r\n", 0.1);
  }
  if (got.empty()) got = testing::ReadUntil(fd, "\r\n\r\n", 10);
  ::close(fd);
  EXPECT_NE(got.find("400"), std::string::npos) << got;
  EXPECT_TRUE(shared_->Alive());
}

TEST_F(ServeReal, OversizedHeadersAreRejected) {
  int fd = testing::ConnectLoopback(shared_->port());
  ASSERT_GE(fd, 0);
  std::string req = "GET /health HTTP/1.1\r\nHost: x\r\n";
  for (int i = 0; i < 200; ++i) req += "X-Filler-" + std::to_string(i) + ": " + std::string(1000, 'f') + "\r\n";
  req += "\r\n";
  // The server stops reading at its limit, so the send may block until the
  // socket is shut down: send from another thread.
  std::thread sender([fd, req] { testing::SendAll(fd, req); });
  std::string got = testing::ReadUntil(fd, "\r\n\r\n", 60);
  ::shutdown(fd, SHUT_RDWR);
  sender.join();
  ::close(fd);
  EXPECT_NE(got.find("HTTP/1.1 431"), std::string::npos) << got.substr(0, 200);  // too many header lines
  EXPECT_TRUE(shared_->Alive());
}

TEST_F(ServeReal, MetricsPassPromtool) {
  if (access("/usr/bin/promtool", X_OK) != 0) GTEST_SKIP() << "promtool not installed (scripts/setup.sh)";
  int status;
  Post(*shared_, "/v1/chat/completions", kChatHi, &status);
  Post(*shared_, "/v1/completions", "{}", &status);
  auto res = shared_->Client()->Get("/metrics");
  ASSERT_TRUE(res);
  ASSERT_EQ(res->status, 200);
  EXPECT_NE(res->get_header_value("Content-Type").find("text/plain"), std::string::npos);
  for (const char* name : {"prosgrow_time_to_first_token_seconds_bucket", "prosgrow_request_latency_seconds_bucket",
                           "prosgrow_completion_tokens_total", "prosgrow_running_sequences",
                           "prosgrow_kv_pinned_blocks", "prosgrow_kv_used_blocks", "prosgrow_queue_depth"}) {
    EXPECT_NE(res->body.find(name), std::string::npos) << name;
  }
  std::string path = (*dir_ / "metrics.txt").string();
  std::ofstream(path) << res->body;
  int rc;
  std::string out = RunShell("/usr/bin/promtool check metrics < " + path + " 2>&1", &rc);
  EXPECT_EQ(rc, 0) << out << "\n" << res->body;
}

TEST_F(ServeReal, OpenAiNodeSdk) {
  const std::string node_dir = std::string(PROSGROW_SOURCE_DIR) + "/tests/node";
  if (access((node_dir + "/node_modules/openai/package.json").c_str(), R_OK) != 0) {
    GTEST_SKIP() << "run `npm ci` in " << node_dir << " first";
  }
  int rc;
  RunShell("node --version > /dev/null 2>&1", &rc);
  if (rc != 0) GTEST_SKIP() << "node not installed";
  auto s = Serve({"--threads", "2", "--api-key", "sk-node-test"}, "node");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  // PROSGROW_EXPECT_TOOL_CALLS unset: random weights do not call tools.
  std::string out =
      RunShell("cd '" + node_dir + "' && env -u PROSGROW_EXPECT_TOOL_CALLS PROSGROW_BASE_URL=" + (*s)->base_url() +
                   "/v1 PROSGROW_API_KEY=sk-node-test node openai_sdk_test.mjs 2>&1",
               &rc);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("openai sdk test: ok"), std::string::npos) << out;
  EXPECT_TRUE((*s)->Alive());
  EXPECT_EQ((*s)->Stop(), 0) << (*s)->Log();
}

}  // namespace
}  // namespace pg::serve_real
