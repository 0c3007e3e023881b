// Issue 50, the router's own door, against a real `prosgrow route` in front
// of real `prosgrow serve` replicas (fakes only inject what serve never
// sends):
//   * 200 requests with a wrong key and 2 MiB session names (`user`,
//     metadata.user_id) leave no table entry, and the router's memory stays
//     within its stated bound (the tables' bounds plus, per request in
//     flight, a few copies of its body);
//   * every table the router keeps is bounded, and /metrics shows its
//     entries, bytes and bound;
//   * a 400 MB replica answer, a status of 999 and a body that is not JSON
//     reach the client as a 502 in its API's shape, the memory bounded by
//     --upstream-max-body-bytes.
// Conditions are awaited; no timing is asserted.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "route_test_support.h"
#include "testing/http_test_util.h"

namespace pg {
namespace {

using json = nlohmann::json;
using testing::FakeReplica;
using testing::ProcStatusBytes;
using testing::RouteFleet;

constexpr int64_t kMiB = 1 << 20;

TEST(RouteLimits, WrongKeyAndHugeSessionNamesLeaveNoTraceAndBoundedMemory) {
  RouteFleet fleet("route_limits_names");
  ASSERT_EQ(fleet.Start(2, {"--api-key", "sk-right"}, {}, {"--api-key", "sk-right"}), "");
  const int pid = fleet.router->pid();
  // Warm: one answered request of each kind.
  httplib::Headers right = {{"Authorization", "Bearer sk-right"}};
  auto ok = fleet.router->Client()->Post("/v1/chat/completions", right,
                                         R"({"messages":[{"role":"user","content":"hi"}],"max_tokens":2})",
                                         "application/json");
  ASSERT_TRUE(ok && ok->status == 200) << (ok ? ok->body : "no answer");
  const int64_t peak_before = ProcStatusBytes(pid, "VmHWM");
  ASSERT_GT(peak_before, 0);

  const std::string name(2 * kMiB, 'n');
  const json chat = {{"messages", {{{"role", "user"}, {"content", "hi"}}}}, {"max_tokens", 2}, {"user", name}};
  const json messages = {{"model", "tiny"},
                         {"max_tokens", 2},
                         {"metadata", {{"user_id", name}}},
                         {"messages", {{{"role", "user"}, {"content", "hi"}}}}};
  const std::string chat_body = chat.dump(), messages_body = messages.dump();
  constexpr int kThreads = 4, kEach = 50;
  std::atomic<int> refused{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      auto cli = fleet.router->Client();
      for (int k = 0; k < kEach; ++k) {
        const bool anthropic = (t + k) % 2 == 1;
        httplib::Headers wrong = {
            {anthropic ? "x-api-key" : "Authorization", anthropic ? "sk-wrong" : "Bearer sk-wrong"}};
        auto r = cli->Post(anthropic ? "/v1/messages" : "/v1/chat/completions", wrong,
                           anthropic ? messages_body : chat_body, "application/json");
        if (r && r->status == 401) refused++;
      }
    });
  }
  for (auto& t : threads) t.join();
  EXPECT_EQ(refused.load(), kThreads * kEach);
  // No trace: the tables hold nothing of the refused requests.
  EXPECT_EQ(fleet.Metric(R"(prosgrow_route_table_entries{table="sessions"})"), 0) << fleet.router->Metrics();
  EXPECT_EQ(fleet.Metric(R"(prosgrow_route_table_bytes{table="sessions"})"), 0);
  // The stated bound (docs/server.md, "Router limits"): at most 8 copies of
  // a request's body per request in flight, and the tables' bounds (nothing
  // here), with 32 MiB for the allocator's slack.
  const int64_t peak_after = ProcStatusBytes(pid, "VmHWM");
  const int64_t bound = kThreads * 8 * int64_t(messages_body.size()) + 32 * kMiB;
  EXPECT_LE(peak_after - peak_before, bound) << "peak RSS " << peak_before << " -> " << peak_after;
  // Nothing kept: the resident size after is within the slack of before.
  const int64_t rss_after = ProcStatusBytes(pid, "VmRSS");
  EXPECT_LE(rss_after, peak_before + 32 * kMiB) << "RSS after " << rss_after << ", peak before " << peak_before;

  // The same long name with the right key: one entry of fixed size.
  auto named = fleet.router->Client()->Post("/v1/chat/completions", right, chat_body, "application/json");
  ASSERT_TRUE(named);
  EXPECT_EQ(named->status, 400) << named->body;  // serve's limit on `user`: refused, so no entry either
  EXPECT_EQ(fleet.Metric(R"(prosgrow_route_table_entries{table="sessions"})"), 0);
  httplib::Headers session = {{"Authorization", "Bearer sk-right"}, {"X-Session-Id", "s-1"}};
  auto homed = fleet.router->Client()->Post("/v1/chat/completions", session,
                                            R"({"messages":[{"role":"user","content":"hi"}],"max_tokens":2})",
                                            "application/json");
  ASSERT_TRUE(homed && homed->status == 200);
  EXPECT_EQ(fleet.Metric(R"(prosgrow_route_table_entries{table="sessions"})"), 1);
  EXPECT_EQ(fleet.Metric(R"(prosgrow_route_table_bytes{table="sessions"})"), 128);
  EXPECT_TRUE(fleet.router->Alive());
}

TEST(RouteLimits, EveryTableIsBoundedAndShown) {
  int events_port = -1;
  const int held = testing::BindLoopback(false, &events_port);  // a free port for the replica's KV events
  ASSERT_GE(held, 0);
  ::close(held);
  RouteFleet fleet("route_limits_tables");
  ASSERT_EQ(fleet.Start(1, {"--kv-events", "tcp://*:" + std::to_string(events_port)}, {},
                        {"--max-sessions", "3", "--max-responses", "2", "--max-index-blocks", "4"}),
            "");
  auto cli = fleet.router->Client();
  for (int k = 0; k < 5; ++k) {
    httplib::Headers h = {{"X-Session-Id", "s" + std::to_string(k)}};
    const json chat = {{"messages",
                        {{{"role", "user"},
                          {"content", std::to_string(k) + ": a prompt long enough to fill several blocks of the "
                                                          "cache, and then a few more words so that it surely does"}}}},
                       {"max_tokens", 2}};
    auto r = cli->Post("/v1/chat/completions", h, chat.dump(), "application/json");
    ASSERT_TRUE(r && r->status == 200);
    auto resp = cli->Post("/v1/responses", R"({"input":"hi","max_output_tokens":2})", "application/json");
    ASSERT_TRUE(resp && resp->status == 200) << (resp ? resp->body : "");
  }
  const std::string url = fleet.replicas[0]->base_url();
  ASSERT_TRUE(testing::WaitUntil([&] {
    return fleet.Metric(R"(prosgrow_route_table_entries{table="index",replica=")" + url + "\"}") == 4;
  })) << fleet.router->Metrics();
  const std::string index = R"({table="index",replica=")" + url + "\"}";
  EXPECT_EQ(fleet.Metric("prosgrow_route_table_entries{table=\"sessions\"}"), 3);
  EXPECT_EQ(fleet.Metric("prosgrow_route_table_bytes{table=\"sessions\"}"), 3 * 128);
  EXPECT_EQ(fleet.Metric("prosgrow_route_table_bound_bytes{table=\"sessions\"}"), 3 * 128);
  EXPECT_EQ(fleet.Metric("prosgrow_route_table_entries{table=\"responses\"}"), 2);
  EXPECT_EQ(fleet.Metric("prosgrow_route_table_bound_bytes{table=\"responses\"}"), 2 * 128);
  const double block_bytes = fleet.Metric("prosgrow_route_table_bytes" + index) / 4;
  EXPECT_GE(block_bytes, 128 + 4 * 1);
  EXPECT_EQ(fleet.Metric("prosgrow_route_table_bound_bytes" + index), 4 * block_bytes);
  EXPECT_GT(fleet.Metric("prosgrow_route_index_dropped_blocks_total{replica=\"" + url + "\"}"), 0);
}

// The body a fake replica sends: `bytes` of a JSON string, in 1 MiB chunks,
// with or without Content-Length.
httplib::Server::Handler HugeAnswer(int64_t bytes, bool with_length) {
  return [bytes, with_length](const httplib::Request&, httplib::Response& res) {
    auto chunk = std::make_shared<std::string>(kMiB, 'x');
    auto provide = [bytes, chunk](size_t offset, size_t, httplib::DataSink& sink) {
      if (int64_t(offset) >= bytes) return false;
      const size_t n = std::min<size_t>(chunk->size(), size_t(bytes - int64_t(offset)));
      return sink.write(chunk->data(), n);
    };
    if (with_length) {
      res.set_content_provider(size_t(bytes), "application/json", provide);
    } else {
      auto sent = std::make_shared<int64_t>(0);
      res.set_chunked_content_provider("application/json", [bytes, chunk, sent](size_t, httplib::DataSink& sink) {
        if (*sent >= bytes) {
          sink.done();
          return true;
        }
        *sent += int64_t(chunk->size());
        return sink.write(chunk->data(), chunk->size());
      });
    }
  };
}

void ExpectBadGateway(const httplib::Result& r, bool anthropic, const std::string& words) {
  ASSERT_TRUE(r) << "no answer";
  EXPECT_EQ(r->status, 502) << r->body;
  json j = json::parse(r->body, nullptr, false);
  if (anthropic) {
    EXPECT_EQ(j.value("type", ""), "error") << r->body;
    EXPECT_EQ(j["error"].value("type", ""), "api_error") << r->body;
  } else {
    EXPECT_EQ(j["error"].value("code", ""), "bad_gateway") << r->body;
  }
  EXPECT_NE(r->body.find(words), std::string::npos) << r->body;
}

TEST(RouteLimits, A400MBAnswerIsA502WithinTheBound) {
  FakeReplica chunked(HugeAnswer(400 * kMiB, false)), sized(HugeAnswer(400 * kMiB, true));
  RouteFleet fleet("route_limits_huge");
  ASSERT_EQ(fleet.Start(0, {}, {chunked.url(), sized.url()}, {"--policy", "round-robin"}), "");
  const int pid = fleet.router->pid();
  const int64_t peak_before = ProcStatusBytes(pid, "VmHWM");
  auto cli = fleet.router->Client();
  const std::string chat = R"({"messages":[{"role":"user","content":"hi"}]})";
  const std::string messages = R"({"model":"tiny","max_tokens":2,"messages":[{"role":"user","content":"hi"}]})";
  for (int k = 0; k < 2; ++k) {  // each replica (round-robin), in each API's shape
    ExpectBadGateway(cli->Post("/v1/chat/completions", chat, "application/json"), false, "upstream-max-body-bytes");
    ExpectBadGateway(cli->Post("/v1/messages", messages, "application/json"), true, "upstream-max-body-bytes");
  }
  // The bound (docs/server.md): --upstream-max-body-bytes (64 MiB) held
  // while it grows (twice that while a string doubles), 1 MiB queued, and
  // 32 MiB of allocator slack.
  const int64_t peak_after = ProcStatusBytes(pid, "VmHWM");
  EXPECT_LE(peak_after - peak_before, 2 * 64 * kMiB + kMiB + 32 * kMiB) << peak_before << " -> " << peak_after;
  EXPECT_EQ(fleet.Metric("prosgrow_route_oversized_answers_total"), 4);
  EXPECT_TRUE(fleet.router->Alive());
}

TEST(RouteLimits, AnInvalidStatusOrANonJsonBodyIsA502) {
  FakeReplica status999([](const httplib::Request&, httplib::Response& res) {
    res.status = 999;
    res.set_content(R"({"ok":true})", "application/json");
  });
  FakeReplica html([](const httplib::Request&, httplib::Response& res) {
    res.set_content("<html>upstream says hi</html>", "text/html");
  });
  RouteFleet fleet("route_limits_invalid");
  ASSERT_EQ(fleet.Start(0, {}, {status999.url(), html.url()}, {"--policy", "round-robin"}), "");
  auto cli = fleet.router->Client();
  httplib::Headers session = {{"X-Session-Id", "s"}};
  const std::string chat = R"({"messages":[{"role":"user","content":"hi"}]})";
  const std::string messages = R"({"model":"tiny","max_tokens":2,"messages":[{"role":"user","content":"hi"}]})";
  ExpectBadGateway(cli->Post("/v1/chat/completions", session, chat, "application/json"), false, "HTTP status 999");
  ExpectBadGateway(cli->Post("/v1/chat/completions", session, chat, "application/json"), false, "not JSON");
  ExpectBadGateway(cli->Post("/v1/messages", session, messages, "application/json"), true, "HTTP status 999");
  ExpectBadGateway(cli->Post("/v1/messages", session, messages, "application/json"), true, "not JSON");
  EXPECT_EQ(fleet.Metric("prosgrow_route_invalid_answers_total"), 4);
  // No answer counted as one: no session was homed.
  EXPECT_EQ(fleet.Metric(R"(prosgrow_route_table_entries{table="sessions"})"), 0);
}

}  // namespace
}  // namespace pg
