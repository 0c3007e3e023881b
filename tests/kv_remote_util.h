// What the remote KV tier's end-to-end tests (kv_remote_test.cc,
// kv_remote_auth_test.cc) share: seeded prompts, one greedy completion read
// back with its cache usage, a /metrics sample, and a `prosgrow serve`
// replica with the Redis tier.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <cstdint>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "testing/serve_process.h"

namespace pg::kv_remote_test {

// n token ids in the ordinary part of the builtin vocabulary, seeded.
inline std::vector<int32_t> Tokens(int seed, int n) {
  std::vector<int32_t> t(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) t[size_t(i)] = 300 + (seed * 7919 + i * 131) % 2700;
  return t;
}

struct Answer {
  int status = 0;
  std::string text;     // the completion, or the error body when status != 200
  int64_t cached = -1;  // usage.prompt_tokens_details.cached_tokens
  int64_t remote = -1;  // of which from the remote tier
};

// /v1/completions: the prompt, 8 tokens at temperature 0.
inline Answer Complete(const testing::ServeProcess& s, const std::vector<int32_t>& prompt) {
  using json = nlohmann::json;
  json body = {{"prompt", prompt}, {"max_tokens", 8}, {"temperature", 0}};
  auto res = s.Client(120)->Post("/v1/completions", body.dump(), "application/json");
  Answer a;
  if (!res) return a;
  a.status = res->status;
  if (res->status != 200) {
    a.text = res->body;
    return a;
  }
  const json j = json::parse(res->body);
  a.text = j["choices"][0]["text"].get<std::string>();
  const json& d = j["usage"]["prompt_tokens_details"];
  a.cached = d["cached_tokens"].get<int64_t>();
  a.remote = d["cached_tokens_by_tier"]["remote"].get<int64_t>();
  return a;
}

// A sample of the replica's /metrics, -1 when absent.
inline double Metric(const testing::ServeProcess& s, const std::string& series) {
  return testing::Sample(s.Metrics(), series).value_or(-1);
}

// `prosgrow serve` on the model with one thread and the Redis tier at
// redis_url (TTL 600 s, lookups waiting up to timeout_ms), then `extra`;
// its log at log_path. nullptr (a test failure) if it does not start.
inline std::unique_ptr<testing::ServeProcess> StartReplica(const std::string& model, const std::string& redis_url,
                                                           int timeout_ms, const std::vector<std::string>& extra,
                                                           const std::string& log_path) {
  std::vector<std::string> args = {"--threads",
                                   "1",
                                   "--kv-remote",
                                   redis_url,
                                   "--kv-remote-ttl",
                                   "600",
                                   "--kv-remote-timeout-ms",
                                   std::to_string(timeout_ms)};
  args.insert(args.end(), extra.begin(), extra.end());
  auto s = testing::ServeProcess::Start(PROSGROW_BINARY, model, args, log_path);
  EXPECT_TRUE(s.ok()) << s.status().ToString();
  return s.ok() ? std::move(*s) : nullptr;
}

}  // namespace pg::kv_remote_test
