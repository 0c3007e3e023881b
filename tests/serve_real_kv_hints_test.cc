// KV hints on the real engine (`prosgrow serve` subprocess; see
// serve_real_fixture.h): a retained prefix survives cache pressure that
// evicts an unhinted one; demote moves a prefix to host and prefetch brings
// it back to the device before the turn that uses it; bad hints are 400s.
// The tiny model's KV block is 4 KiB (2 layers x K,V x 16 tokens x 2 heads x
// 16 dims x 2 bytes), so 64 KiB tiers hold 16 blocks each.
#include "serve_real_fixture.h"

namespace pg::serve_real {
namespace {

// 65 token ids: 4 full blocks of 16 (the 65th is left to compute).
std::string TokenPrompt(int seed) {
  std::string s = "[";
  for (int i = 0; i < 65; ++i) s += (i ? "," : "") + std::to_string(300 + (seed * 131 + i * 17) % 3000);
  return s + "]";
}

// POST /v1/completions with a token prompt and optional kv_hints; returns usage.
json Complete(const ServeProcess& s, int seed, const std::string& hints = "") {
  std::string body = R"({"max_tokens":1,"temperature":0,"prompt":)" + TokenPrompt(seed);
  if (!hints.empty()) body += R"(,"kv_hints":)" + hints;
  body += "}";
  auto res = s.Client()->Post("/v1/completions", body, "application/json");
  const int status = res ? res->status : -1;
  json j = res ? json::parse(res->body, nullptr, false) : json();
  EXPECT_EQ(status, 200) << j.dump();
  return j.value("usage", json::object());
}

int64_t Cached(const json& usage, const char* tier = nullptr) {
  const json& d = usage["prompt_tokens_details"];
  return tier ? d["cached_tokens_by_tier"][tier].get<int64_t>() : d["cached_tokens"].get<int64_t>();
}

const std::vector<std::string> kSmallTiers = {"--threads",       "2",     "--policy",      "optimized",
                                              "--kv-device-mem", "64KiB", "--kv-host-mem", "64KiB",
                                              "--kv-eviction",   "lru",   "--ctx-size",    "256"};

TEST_F(ServeReal, KvHintRetainedPrefixSurvivesPressureThatEvictsAnUnhintedOne) {
  auto s = Serve(kSmallTiers, "kv-hints-retain");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ServeProcess& srv = **s;
  Complete(srv, 1, R"([{"action":"retain","ttl_s":600}])");  // A: retained
  ASSERT_EQ(Metric(srv, "prosgrow_kv_capacity_blocks{tier=\"device\"}"), 16);
  ASSERT_EQ(Metric(srv, "prosgrow_kv_capacity_blocks{tier=\"host\"}"), 16);
  Complete(srv, 2);  // B: no hint
  EXPECT_EQ(Metric(srv, "prosgrow_kv_hint_held_blocks{hold=\"retain\"}"), 4);
  for (int p = 10; p < 20; ++p) Complete(srv, p);  // 40 more blocks through 32 slots
  EXPECT_GT(Metric(srv, "prosgrow_kv_evictions_total{tier=\"host\"}"), 0);
  EXPECT_EQ(Cached(Complete(srv, 2)), 0);                                         // B was pushed out of both tiers
  EXPECT_EQ(Cached(Complete(srv, 1)), 64);                                        // A was not
  EXPECT_EQ(Metric(srv, "prosgrow_kv_hint_blocks_total{action=\"retain\"}"), 4);  // held when A finished
  EXPECT_EQ(srv.Stop(), 0) << srv.Log();
}

TEST_F(ServeReal, KvHintDemoteThenPrefetch) {
  auto s = Serve(kSmallTiers, "kv-hints-demote");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ServeProcess& srv = **s;
  Complete(srv, 1, R"([{"action":"demote"}])");
  EXPECT_EQ(Metric(srv, "prosgrow_kv_hint_blocks_total{action=\"demote\"}"), 4);
  json u = Complete(srv, 1, R"({"protocol_version":1,"actions":[{"action_type":"demote"}]})");  // no prefetch
  EXPECT_EQ(Cached(u, "host"), 64) << u.dump();  // promoted from host by the admission
  u = Complete(srv, 1, R"([{"action":"prefetch","prefix_tokens":64}])");
  EXPECT_EQ(Cached(u, "device"), 64) << u.dump();  // loaded before the match
  EXPECT_EQ(Metric(srv, "prosgrow_kv_hint_blocks_total{action=\"prefetch\"}"), 4);
  EXPECT_EQ(srv.Stop(), 0) << srv.Log();
}

TEST_F(ServeReal, KvHintPinBudgetAndBadHints) {
  auto args = kSmallTiers;
  args.insert(args.end(), {"--kv-pin-budget", "8KiB"});  // 2 blocks
  auto s = Serve(args, "kv-hints-pin");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ServeProcess& srv = **s;
  Complete(srv, 1, R"([{"action":"pin","ttl_s":600}])");
  EXPECT_EQ(Metric(srv, "prosgrow_kv_hint_held_blocks{hold=\"pin\"}"), 2);
  EXPECT_GE(Metric(srv, "prosgrow_kv_hints_refused_total"), 1);
  EXPECT_EQ(Metric(srv, "prosgrow_kv_hint_held_blocks{hold=\"retain\"}"), 4);  // the refused rest is retained
  int status;
  json j = Post(srv, "/v1/chat/completions",
                R"({"messages":[{"role":"user","content":"x"}],"kv_hints":[{"action":"pin","ttl_s":0}]})", &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(j["error"]["param"], "kv_hints[0].ttl_s") << j.dump();
  j = Post(srv, "/v1/completions", R"({"prompt":"x","kv_hints":{"actions":[{"action_type":"evict"}]}})", &status);
  EXPECT_EQ(status, 400);
  EXPECT_EQ(j["error"]["param"], "kv_hints.actions[0].action_type") << j.dump();
  EXPECT_EQ(srv.Stop(), 0) << srv.Log();
}

TEST_F(ServeReal, KvQuotaAndFairShareFlags) {
  auto args = kSmallTiers;
  args.insert(args.end(), {"--kv-session-quota-device", "1KiB"});
  auto bad = Serve(args, "kv-quota-bad");
  ASSERT_FALSE(bad.ok());  // a quota that holds no block: the server refuses to start
  int rc = 0;
  const std::string out = RunShell(std::string(PROSGROW_BINARY) + " serve -m " + *model_ +
                                       " --kv-device-mem 64KiB --kv-session-quota-host 1KiB --port 0 2>&1",
                                   &rc);
  EXPECT_NE(rc, 0);
  EXPECT_NE(out.find("--kv-session-quota-host"), std::string::npos) << out;
  args = kSmallTiers;
  args.insert(args.end(), {"--kv-session-quota-device", "8KiB", "--kv-fair-share"});
  auto s = Serve(args, "kv-quota");
  ASSERT_TRUE(s.ok()) << s.status().ToString();
  ServeProcess& srv = **s;
  int status;
  const std::string body = R"({"max_tokens":1,"temperature":0,"user":"heavy","prompt":)" + TokenPrompt(5) + "}";
  Post(srv, "/v1/completions", body, &status);
  EXPECT_EQ(status, 200);
  EXPECT_EQ(Metric(srv, "prosgrow_kv_quota_evictions_total"), 2);  // 4 blocks, quota 2: 2 demoted to host
  EXPECT_EQ(srv.Stop(), 0) << srv.Log();
}

}  // namespace
}  // namespace pg::serve_real
