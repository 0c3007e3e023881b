// Issue 23: tenants share nothing. Real `prosgrow serve` processes on the tiny
// synthetic model with --api-keys-file (tenants a and b, and c sharing a's
// cache by --tenant-share-cache):
//   * one serve: b sending a's prompt gets cached_tokens 0 and every token
//     never_seen, whatever a did with it before (sent it, evicted it,
//     diverged from it); a's own reuse works; the same cache_salt inside a
//     tenant reuses, another salt reuses nothing; x-api-key works; a tenant's
//     session release touches only its own session; SIGHUP re-reads the file
//     and a bad file keeps the old keys; a stored response is its tenant's;
//   * two replicas sharing a disk tier and Redis (skipped without
//     redis-server): what a stored on replica 1 reaches a on replica 2 (tiers
//     disk or remote) and never b.
#include <gtest/gtest.h>
#include <httplib.h>
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "kv/redis_test_server.h"
#include "testing/serve_process.h"

namespace pg {
namespace {

namespace fs = std::filesystem;
using json = nlohmann::json;
using testing::ServeProcess;

constexpr const char* kKeyA = "key-tenant-a-0001";
constexpr const char* kKeyB = "key-tenant-b-0002";
constexpr const char* kKeyC = "key-tenant-c-0003";

std::vector<int32_t> Tokens(int seed, int n) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) t[size_t(i)] = 300 + (seed * 7919 + i * 131) % 2700;
  return t;
}

struct Usage {
  int status = 0;
  std::string body;
  int64_t cached = -1;
  json details;
  std::string text;
};

Usage Complete(const ServeProcess& s, const std::string& key, const std::vector<int32_t>& prompt,
               const std::string& salt = "", bool x_api_key = false) {
  json body = {{"prompt", prompt}, {"max_tokens", 4}, {"temperature", 0}};
  if (!salt.empty()) body["cache_salt"] = salt;
  httplib::Headers h;
  if (x_api_key)
    h.emplace("x-api-key", key);
  else
    h.emplace("Authorization", "Bearer " + key);
  auto res = s.Client()->Post("/v1/completions", h, body.dump(), "application/json");
  Usage u;
  if (!res) return u;
  u.status = res->status;
  u.body = res->body;
  if (res->status != 200) return u;
  const json j = json::parse(res->body);
  u.details = j["usage"]["prompt_tokens_details"];
  u.cached = u.details["cached_tokens"].get<int64_t>();
  u.text = j["choices"][0]["text"].get<std::string>();
  return u;
}

// Every token of a 40-token prompt is never_seen, nothing cached.
void ExpectNothingShared(const Usage& u, const char* what) {
  ASSERT_EQ(u.status, 200) << what << ": " << u.body;
  EXPECT_EQ(u.cached, 0) << what << ": " << u.details.dump();
  EXPECT_EQ(u.details["miss_reasons"]["never_seen"], 40) << what << ": " << u.details.dump();
  EXPECT_FALSE(u.details["miss_reasons"].contains("evicted_seconds_ago")) << what << ": " << u.details.dump();
}

class ServeTenants : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() / ("pg_tenants_" + std::to_string(::getpid()));
    fs::create_directories(dir_);
    model_ = (dir_ / "tiny.gguf").string();
    Status st = testing::MakeTinyModel(PROSGROW_BINARY, model_);
    ASSERT_TRUE(st.ok()) << st.ToString();
    keys_ = (dir_ / "keys.txt").string();
    std::ofstream(keys_) << "# tenant key\na " << kKeyA << "\nb " << kKeyB << "\nc " << kKeyC << "\n";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir_, ec);
  }
  std::unique_ptr<ServeProcess> Serve(std::vector<std::string> extra, const std::string& log) {
    std::vector<std::string> args = {"--threads",
                                     "2",
                                     "--policy",
                                     "optimized",
                                     "--kv-device-mem",
                                     "64KiB",
                                     "--kv-host-mem",
                                     "256KiB",
                                     "--kv-eviction",
                                     "lru",
                                     "--kv-min-promote",
                                     "0",
                                     "--api-keys-file",
                                     keys_,
                                     "--tenant-share-cache",
                                     "a,c"};
    args.insert(args.end(), extra.begin(), extra.end());
    auto s = ServeProcess::Start(PROSGROW_BINARY, model_, args, (dir_ / log).string());
    EXPECT_TRUE(s.ok()) << s.status().ToString();
    return s.ok() ? std::move(*s) : nullptr;
  }

  fs::path dir_;
  std::string model_, keys_;
};

TEST_F(ServeTenants, OneServerKeepsTenantsApart) {
  auto s = Serve({}, "serve.log");
  ASSERT_TRUE(s);
  const std::vector<int32_t> p = Tokens(1, 40);

  // No key, a wrong key: 401.
  EXPECT_EQ(s->Client()->Post("/v1/completions", json{{"prompt", p}}.dump(), "application/json")->status, 401);
  EXPECT_EQ(Complete(*s, "key-nobody-000", p).status, 401);

  // a sends p twice: the second reuses its 2 full blocks.
  ASSERT_EQ(Complete(*s, kKeyA, p).cached, 0);
  Usage again = Complete(*s, kKeyA, p, "", /*x_api_key=*/true);
  EXPECT_EQ(again.cached, 32) << again.details.dump();
  // b sends the same prompt: nothing of a's.
  Usage b = Complete(*s, kKeyB, p);
  ExpectNothingShared(b, "b after a sent it");
  EXPECT_EQ(b.text, again.text);  // the same answer, recomputed
  // c shares a's cache by --tenant-share-cache a,c.
  EXPECT_EQ(Complete(*s, kKeyC, p).cached, 32);

  // a diverges from its own d: a sees diverged; b, which never sent d, sees
  // never_seen for the same edit.
  const std::vector<int32_t> d = Tokens(4, 40);
  ASSERT_EQ(Complete(*s, kKeyA, d).cached, 0);
  std::vector<int32_t> edited = d;
  edited[20] = 2999;
  Usage ad = Complete(*s, kKeyA, edited);
  EXPECT_EQ(ad.details["miss_reasons"]["diverged"], 16) << ad.details.dump();
  std::vector<int32_t> edited2 = d;
  edited2[20] = 2998;
  ExpectNothingShared(Complete(*s, kKeyB, edited2), "b after a diverged");

  // cache_salt inside a tenant: the same salt reuses, another reuses nothing.
  const std::vector<int32_t> q = Tokens(2, 40);
  EXPECT_EQ(Complete(*s, kKeyA, q, "salt-1").cached, 0);
  EXPECT_EQ(Complete(*s, kKeyA, q, "salt-1").cached, 32);
  ExpectNothingShared(Complete(*s, kKeyA, q, "salt-2"), "a with another salt");
  ExpectNothingShared(Complete(*s, kKeyA, q), "a without a salt");
  ExpectNothingShared(Complete(*s, kKeyB, q, "salt-1"), "b with a's salt");
  Usage bad = Complete(*s, kKeyA, q, std::string(300, 'x'));
  EXPECT_EQ(bad.status, 400) << bad.body;
  EXPECT_NE(bad.body.find("cache_salt"), std::string::npos) << bad.body;

  // a's p is evicted from every tier: a sees evicted, b still never_seen.
  const std::vector<int32_t> r = Tokens(3, 40);
  ASSERT_EQ(Complete(*s, kKeyA, r).cached, 0);
  for (int f = 0; f < 8; ++f) Complete(*s, kKeyA, Tokens(200 + f, 200));
  Usage ae = Complete(*s, kKeyA, r);
  EXPECT_EQ(ae.details["miss_reasons"]["evicted"], 32) << ae.details.dump();
  for (int f = 0; f < 8; ++f) Complete(*s, kKeyA, Tokens(200 + f, 200));
  ExpectNothingShared(Complete(*s, kKeyB, r), "b after a's blocks were evicted");
  EXPECT_TRUE(s->Alive()) << s->Log();
  EXPECT_EQ(s->Stop(), 0) << s->Log();
}

TEST_F(ServeTenants, SessionsKeysAndReload) {
  auto s = Serve({}, "serve.log");
  ASSERT_TRUE(s);
  httplib::Headers ha = {{"Authorization", std::string("Bearer ") + kKeyA}};
  // Session ids are capped (header and URL).
  httplib::Headers long_id = ha;
  long_id.emplace("X-Session-Id", std::string(300, 's'));
  auto res = s->Client()->Post("/v1/completions", long_id, json{{"prompt", "hi"}, {"max_tokens", 1}}.dump(),
                               "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400) << res->body;
  res = s->Client()->Post("/v1/sessions/" + std::string(300, 's') + "/release", ha, "", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400) << res->body;
  res = s->Client()->Post("/v1/sessions/s1/release", ha, "", "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200) << res->body;
  // cache_ttl_s is capped like the kv_hints.
  res = s->Client()->Post("/v1/completions", ha, json{{"prompt", "hi"}, {"max_tokens", 1}, {"cache_ttl_s", 1e6}}.dump(),
                          "application/json");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 400) << res->body;
  // /kv-events is behind the key.
  EXPECT_EQ(s->Client()->Get("/kv-events")->status, 401);

  // SIGHUP: a new key for d works, a's old key stops working.
  std::ofstream(keys_) << "a key-tenant-a-9999\nd key-tenant-d-0004\n";
  ::kill(s->pid(), SIGHUP);
  ASSERT_TRUE(testing::WaitUntil([&] { return Complete(*s, "key-tenant-d-0004", Tokens(5, 8)).status == 200; }));
  EXPECT_EQ(Complete(*s, kKeyA, Tokens(5, 8)).status, 401);
  // A bad file keeps the keys in force, and says so in one line.
  std::ofstream(keys_) << "d\n";
  ::kill(s->pid(), SIGHUP);
  ASSERT_TRUE(testing::WaitUntil([&] { return s->Log().find("API keys not reloaded") != std::string::npos; }));
  EXPECT_EQ(Complete(*s, "key-tenant-d-0004", Tokens(5, 8)).status, 200);
  EXPECT_EQ(s->Stop(), 0) << s->Log();
}

// Stored responses (/v1/responses, store: true) are the tenant's own: b
// cannot continue a's response by its id, a can.
TEST_F(ServeTenants, StoredResponsesArePerTenant) {
  auto s = Serve({}, "serve.log");
  ASSERT_TRUE(s);
  auto post = [&](const char* key, const json& body) {
    httplib::Headers h = {{"Authorization", std::string("Bearer ") + key}};
    return s->Client()->Post("/v1/responses", h, body.dump(), "application/json");
  };
  auto first = post(kKeyA, {{"input", "Hello"}, {"max_output_tokens", 2}, {"temperature", 0}});
  ASSERT_TRUE(first);
  ASSERT_EQ(first->status, 200) << first->body;
  const std::string id = json::parse(first->body)["id"].get<std::string>();
  const json next = {{"input", "And then?"}, {"max_output_tokens", 2}, {"previous_response_id", id}};
  auto by_b = post(kKeyB, next);
  ASSERT_TRUE(by_b);
  EXPECT_EQ(by_b->status, 400) << by_b->body;
  EXPECT_EQ(json::parse(by_b->body)["error"]["code"], "previous_response_not_found") << by_b->body;
  auto by_a = post(kKeyA, next);
  ASSERT_TRUE(by_a);
  EXPECT_EQ(by_a->status, 200) << by_a->body;
  EXPECT_EQ(s->Stop(), 0) << s->Log();
}

// Replica 1 serves a (and flushes its cache to the shared disk tier on
// exit); replica 2 starts on the same disk directory and Redis.
TEST_F(ServeTenants, TwoReplicasSharingDiskAndRedis) {
  testing::RedisTestServer redis;
  if (std::string why = redis.Start(); !why.empty()) GTEST_SKIP() << why;
  const std::string disk = (dir_ / "disk").string();
  const std::vector<std::string> shared = {
      "--kv-disk-dir", disk, "--kv-remote", redis.url(), "--kv-remote-ttl", "600", "--kv-remote-timeout-ms", "5000"};
  const std::vector<int32_t> p = Tokens(7, 40), q = Tokens(8, 40);
  std::string text_p;
  {
    auto r1 = Serve(shared, "replica1.log");
    ASSERT_TRUE(r1);
    Usage a = Complete(*r1, kKeyA, p);
    ASSERT_EQ(a.status, 200) << a.body;
    text_p = a.text;
    ASSERT_EQ(Complete(*r1, kKeyA, q).status, 200);
    // Both of a's prompts reach Redis (the writer thread is asynchronous).
    ASSERT_TRUE(testing::WaitUntil([&] {
      return testing::Sample(r1->Metrics(), "prosgrow_kv_remote_writes_total").value_or(0) >= 4;
    })) << r1->Metrics();
    EXPECT_EQ(r1->Stop(), 0) << r1->Log();
  }
  auto r2 = Serve(shared, "replica2.log");
  ASSERT_TRUE(r2);
  Usage b = Complete(*r2, kKeyB, p);
  ExpectNothingShared(b, "b on replica 2");
  EXPECT_EQ(b.text, text_p);
  ExpectNothingShared(Complete(*r2, kKeyB, q), "b on replica 2, second prompt");
  Usage a2 = Complete(*r2, kKeyA, p);
  EXPECT_EQ(a2.cached, 32) << a2.details.dump();
  EXPECT_EQ(a2.text, text_p);
  EXPECT_EQ(r2->Stop(), 0) << r2->Log();
}

}  // namespace
}  // namespace pg
