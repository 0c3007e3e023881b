// Issue 50: a replica that accepts a request and never answers (its /health
// still OK) gets no more than the router's deadlines, against a real
// `prosgrow route` and a real `prosgrow serve` (the hung replica is a fake:
// serve never hangs on purpose):
//   * no status line within --upstream-ttfb-timeout: the replica is taken
//     out and a deterministic request is answered by the other replica;
//   * a stream's headers and then silence past --upstream-idle-timeout: the
//     stream is carried on by the other replica, whole, without an error.
// The requests are awaited with a generous outer limit; no timing is asserted.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "route_test_support.h"
#include "testing/http_test_util.h"

namespace pg {
namespace {

using json = nlohmann::json;
using testing::FakeReplica;
using testing::RouteFleet;

TEST(RouteDeadlines, AHungReplicaFailsOverWithinTheDeadline) {
  FakeReplica* self = nullptr;
  FakeReplica hanging([&self](const httplib::Request&, httplib::Response& res) {
    self->calls++;
    self->Hang();  // accepted, never answered
    res.set_content("{}", "application/json");
  });
  self = &hanging;
  FakeReplica& hung = hanging;
  RouteFleet fleet("route_deadlines_ttfb");
  // Round-robin: the first request goes to the first replica, the hung one.
  ASSERT_EQ(fleet.Start(1, {}, {hanging.url()},
                        {"--policy", "round-robin", "--upstream-ttfb-timeout", "2", "--upstream-quarantine", "600"}),
            "");
  const std::string real = fleet.replicas[0]->base_url();
  auto cli = fleet.router->Client(/*timeout_s=*/300);
  const std::string body = R"({"messages":[{"role":"user","content":"hi"}],"max_tokens":4,"temperature":0})";
  auto r = cli->Post("/v1/chat/completions", body, "application/json");
  ASSERT_TRUE(r) << "no answer";
  EXPECT_EQ(r->status, 200) << r->body;
  EXPECT_EQ(r->get_header_value("X-Prosgrow-Replica"), real);
  EXPECT_EQ(hung.calls.load(), 1);
  EXPECT_EQ(fleet.Metric("prosgrow_route_deadline_failovers_total"), 1) << fleet.router->Metrics();
  EXPECT_EQ(fleet.Metric("prosgrow_route_replica_up{replica=\"" + hanging.url() + "\"}"), 0);
  // Taken out although its /health answers: the next requests never wait on it.
  for (int k = 0; k < 3; ++k) {
    auto again = cli->Post("/v1/chat/completions", body, "application/json");
    ASSERT_TRUE(again && again->status == 200);
    EXPECT_EQ(again->get_header_value("X-Prosgrow-Replica"), real);
  }
  EXPECT_EQ(hung.calls.load(), 1);
  EXPECT_EQ(fleet.Metric("prosgrow_route_replica_deadlines_missed_total{replica=\"" + hanging.url() + "\"}"), 1);
}

TEST(RouteDeadlines, ASilentStreamIsCarriedOnByAnotherReplica) {
  FakeReplica* self = nullptr;
  FakeReplica silent([&self](const httplib::Request&, httplib::Response& res) {
    self->calls++;
    FakeReplica* s = self;
    res.set_chunked_content_provider("text/event-stream", [s](size_t, httplib::DataSink&) {
      s->Hang();  // headers sent, then nothing
      return false;
    });
  });
  self = &silent;
  RouteFleet fleet("route_deadlines_idle");
  ASSERT_EQ(fleet.Start(1, {}, {silent.url()},
                        {"--policy", "round-robin", "--upstream-idle-timeout", "2", "--upstream-quarantine", "600"}),
            "");
  auto cli = fleet.router->Client(/*timeout_s=*/300);
  const std::string body =
      R"({"messages":[{"role":"user","content":"hi"}],"max_tokens":8,"temperature":0,"stream":true})";
  auto r = cli->Post("/v1/chat/completions", body, "application/json");
  ASSERT_TRUE(r) << "no answer";
  EXPECT_EQ(r->status, 200);
  EXPECT_EQ(silent.calls.load(), 1);
  const std::vector<std::string> data = testing::SseData(r->body);
  ASSERT_FALSE(data.empty()) << r->body;
  EXPECT_EQ(data.back(), "[DONE]") << r->body;
  EXPECT_EQ(r->body.find("\"error\""), std::string::npos) << r->body;
  // The same as the survivor streams it alone.
  auto direct = fleet.replicas[0]->Client()->Post("/v1/chat/completions", body, "application/json");
  ASSERT_TRUE(direct);
  std::string routed_text, direct_text;
  for (const auto& [d, out] :
       {std::pair{testing::SseData(r->body), &routed_text}, std::pair{testing::SseData(direct->body), &direct_text}})
    for (const std::string& e : d) {
      json j = json::parse(e, nullptr, false);
      if (j.is_object() && j.contains("choices") && !j["choices"].empty())
        *out += j["choices"][0]["delta"].value("content", "");
    }
  EXPECT_EQ(routed_text, direct_text);
  EXPECT_EQ(fleet.Metric("prosgrow_route_deadline_failovers_total"), 1) << fleet.router->Metrics();
  EXPECT_EQ(fleet.Metric("prosgrow_route_resumed_streams_total"), 1);
}

}  // namespace
}  // namespace pg
