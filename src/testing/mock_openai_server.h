// MockOpenAiServer: a small OpenAI-compatible streaming server for tests and
// demos of the bench (no model: it streams placeholder tokens). Serves
//   POST /v1/completions       prompt as token-id array or text
//   POST /v1/chat/completions  messages[].content text
//   GET  /v1/models            {"data": [{"id": "mock", "vocab_size": V}]}
//   GET  /metrics              prosgrow_prompt_tokens_cached_total
// Every request streams max_tokens chunks (SSE), then a finish chunk, a usage
// chunk and [DONE]. Cached tokens come from an unlimited block-granular
// prefix cache over the prompts it has received (text is split into words,
// one "token" per word). Delays and failures are configurable.
// Thread-safety: Start/Stop from one thread; counters() from any thread.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "base/status.h"

namespace httplib {
class Server;
}

namespace pg::bench {

class PrefixReuseTracker;

struct MockOptions {
  double ttft_s = 0;           // delay before the first output chunk
  double token_gap_s = 0;      // delay between output chunks
  int64_t block_tokens = 16;   // prefix-cache granularity
  int32_t fail_every = 0;      // n > 0: every n-th request (1-based) gets HTTP 500
  int32_t drop_every = 0;      // n > 0: every n-th request is cut after its first chunk
  bool report_usage = true;    // usage chunk (with prompt_tokens_details.cached_tokens)
  bool report_tiers = false;   // cached_tokens_by_tier: device 3/4, host the rest, disk 0
  bool llama_timings = false;  // llama.cpp style timings {cache_n, prompt_n} in the last chunk
  int64_t vocab_size = 0;      // > 0: reported by /v1/models
};

struct MockCounters {
  int64_t requests = 0;        // completion requests received
  int64_t completed = 0;       // streams finished with [DONE]
  int64_t failed_500 = 0;
  int64_t dropped = 0;
  int64_t prompt_tokens = 0;   // over completed streams
  int64_t output_tokens = 0;   // over completed streams
  int64_t cached_tokens = 0;   // over completed streams
};

class MockOpenAiServer {
 public:
  explicit MockOpenAiServer(MockOptions opt);
  ~MockOpenAiServer();
  // Binds 127.0.0.1 on an ephemeral port and serves on a background thread.
  Status Start();
  void Stop();
  int port() const { return port_; }
  std::string url() const;
  MockCounters counters() const;

 private:
  MockOptions opt_;
  std::unique_ptr<httplib::Server> server_;
  std::unique_ptr<PrefixReuseTracker> cache_;
  std::thread thread_;
  int port_ = -1;
  mutable std::mutex mu_;
  MockCounters counters_;  // guarded by mu_
};

}  // namespace pg::bench
