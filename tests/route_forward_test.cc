// Issue 50: the router answers every route serve answers, against a real
// `prosgrow route` in front of two real `prosgrow serve` replicas:
//   * /v1/models/{id}, /v1/sessions/{id}/release and /v1/responses (whole
//     and streamed) answer as a replica does, and the wrong method gets
//     serve's 405;
//   * a previous_response_id reaches the replica holding that response,
//     whatever the policy would choose (round-robin here);
//   * the official OpenAI SDK's responses.create and responses.stream, with
//     a tool round trip continued by previous_response_id, through the
//     router (tests/node/openai_responses_test.mjs).
#include <gtest/gtest.h>

#include <cstdio>
#include <nlohmann/json.hpp>

#include "route_test_support.h"
#include "testing/http_test_util.h"

namespace pg {
namespace {

using json = nlohmann::json;
using testing::RouteFleet;

TEST(RouteForward, EveryServeRouteIsAnswered) {
  RouteFleet fleet("route_forward_routes");
  ASSERT_EQ(fleet.Start(2, {}, {}, {}), "");
  auto routed = fleet.router->Client();
  auto direct = fleet.replicas[0]->Client();
  auto models = routed->Get("/v1/models");
  ASSERT_TRUE(models && models->status == 200);
  const std::string id = json::parse(models->body)["data"][0]["id"];
  auto model = routed->Get("/v1/models/" + id);
  ASSERT_TRUE(model);
  EXPECT_EQ(model->status, 200) << model->body;  // a 404 before the router forwarded it
  struct Probe {
    const char* method;
    std::string path, body;
  } probes[] = {
      {"GET", "/v1/models/" + id, ""},
      {"GET", "/v1/models/no-such-model", ""},
      {"POST", "/v1/sessions/s-1/release", ""},
      {"POST", "/v1/sessions/" + std::string(300, 's') + "/release", "{}"},
      {"GET", "/v1/responses", ""},
      {"POST", "/v1/responses", R"({"input":"hi","max_output_tokens":"many"})"},
  };
  for (const Probe& p : probes) {
    auto send = [&](httplib::Client& c) {
      return std::string(p.method) == "GET" ? c.Get(p.path) : c.Post(p.path, p.body, "application/json");
    };
    auto d = send(*direct), r = send(*routed);
    ASSERT_TRUE(d && r) << p.path;
    EXPECT_EQ(r->status, d->status) << p.path << ": " << r->body;
    EXPECT_EQ(json::parse(r->body, nullptr, false), json::parse(d->body, nullptr, false)) << p.path;
  }
  auto whole =
      routed->Post("/v1/responses", R"({"input":"hi","max_output_tokens":4,"temperature":0})", "application/json");
  ASSERT_TRUE(whole);
  ASSERT_EQ(whole->status, 200) << whole->body;
  EXPECT_EQ(json::parse(whole->body)["object"], "response");
  auto streamed = routed->Post("/v1/responses", R"({"input":"hi","max_output_tokens":4,"temperature":0,"stream":true})",
                               "application/json");
  ASSERT_TRUE(streamed);
  ASSERT_EQ(streamed->status, 200) << streamed->body;
  const auto sse = testing::SseEvents(streamed->body);
  ASSERT_FALSE(sse.empty()) << streamed->body;
  EXPECT_EQ(sse.front().first, "response.created");
  EXPECT_TRUE(sse.back().first == "response.completed" || sse.back().first == "response.incomplete") << streamed->body;
  // The router's own: it publishes no KV events.
  auto events = routed->Get("/kv-events");
  ASSERT_TRUE(events);
  EXPECT_EQ(events->status, 404);
}

TEST(RouteForward, PreviousResponseIdReachesItsReplica) {
  RouteFleet fleet("route_forward_previous");
  ASSERT_EQ(fleet.Start(2, {}, {}, {"--policy", "round-robin"}), "");
  auto cli = fleet.router->Client();
  for (bool stream : {false, true}) {
    json first = {{"input", "Remember the word apple."}, {"max_output_tokens", 4}, {"temperature", 0}};
    if (stream) first["stream"] = true;
    auto a = cli->Post("/v1/responses", first.dump(), "application/json");
    ASSERT_TRUE(a && a->status == 200) << (a ? a->body : "");
    std::string id;
    if (stream) {
      for (const auto& [name, j] : testing::SseEvents(a->body))
        if (name == "response.created") id = j["response"]["id"];
    } else {
      id = json::parse(a->body)["id"];
    }
    ASSERT_FALSE(id.empty()) << a->body;
    const std::string home = a->get_header_value("X-Prosgrow-Replica");
    // Round-robin alone would send every other one to the replica without it.
    for (int k = 0; k < 3; ++k) {
      json next = {{"input", "Which word?"}, {"max_output_tokens", 4}, {"previous_response_id", id}};
      auto b = cli->Post("/v1/responses", next.dump(), "application/json");
      ASSERT_TRUE(b);
      EXPECT_EQ(b->status, 200) << b->body;
      EXPECT_EQ(b->get_header_value("X-Prosgrow-Replica"), home);
    }
  }
  EXPECT_EQ(fleet.Metric(R"(prosgrow_route_table_entries{table="responses"})"), 8);
}

TEST(RouteForward, OpenAiSdkResponsesThroughTheRouter) {
  const std::string node_dir = std::string(PROSGROW_SOURCE_DIR) + "/tests/node";
  if (access((node_dir + "/node_modules/openai/package.json").c_str(), R_OK) != 0 ||
      system("node --version > /dev/null 2>&1") != 0)
    GTEST_SKIP() << "node or the openai SDK missing (run `npm ci` in " << node_dir << ")";
  RouteFleet fleet("route_forward_sdk");
  ASSERT_EQ(fleet.Start(2, {"--api-key", "sk-node-test"}, {}, {"--api-key", "sk-node-test", "--policy", "round-robin"}),
            "");
  // The hosted-tool counters are the replicas' own; the script sums them.
  const std::string roots = fleet.replicas[0]->base_url() + "," + fleet.replicas[1]->base_url();
  const std::string cmd = "cd '" + node_dir + "' && PROSGROW_BASE_URL=" + fleet.router->base_url() +
                          "/v1 PROSGROW_METRICS_ROOTS=" + roots +
                          " PROSGROW_API_KEY=sk-node-test node openai_responses_test.mjs 2>&1";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  ASSERT_NE(p, nullptr);
  char buf[4096];
  for (size_t n; (n = fread(buf, 1, sizeof(buf), p)) > 0;) out.append(buf, n);
  const int rc = pclose(p);
  EXPECT_EQ(rc, 0) << out;
  EXPECT_NE(out.find("openai responses test: ok"), std::string::npos) << out;
  EXPECT_GT(fleet.Metric("prosgrow_route_replica_requests_total{replica=\"" + fleet.replicas[0]->base_url() + "\"}"),
            0);
  EXPECT_GT(fleet.Metric("prosgrow_route_replica_requests_total{replica=\"" + fleet.replicas[1]->base_url() + "\"}"),
            0);
}

}  // namespace
}  // namespace pg
