// MockOpenAiServer: a small OpenAI-compatible server for the bench's and the
// eval's tests (no model). Serves
//   POST /v1/completions       prompt as token-id array or text
//   POST /v1/chat/completions  messages[].content text
//   GET  /v1/models            {"data": [{"id": model_id, "vocab_size": V}]}
//   GET  /metrics              prosgrow_prompt_tokens_cached_total
// A streaming request gets max_tokens placeholder chunks (SSE), then a finish
// chunk, a usage chunk and [DONE]. A request with "stream": false gets one
// JSON body: reply_fn's answer, or max_tokens placeholder tokens. Cached
// tokens come from an unlimited block-granular prefix cache over the prompts
// it has received (text is split into words, one "token" per word). Delays
// and failures are configurable. Every request body and Authorization header
// is kept for the test to inspect.
// Thread-safety: Start/Stop from one thread; counters(), requests() and
// auth_headers() from any thread; reply_fn runs on server threads.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "base/status.h"

namespace httplib {
class DataSink;
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace pg::bench {

class PrefixReuseTracker;

// A non-streaming answer (reply_fn).
struct MockReply {
  int status = 200;  // != 200: an error body with this status
  std::string text;
  std::string finish_reason = "stop";
  int64_t prompt_tokens = 10;
  int64_t completion_tokens = 5;
};

struct MockOptions {
  std::string model_id = "mock";  // /v1/models
  // Answers "stream": false requests (given the request body); unset: the
  // placeholder tokens, finish "length".
  std::function<MockReply(const nlohmann::json& body)> reply_fn;
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
  int64_t requests = 0;   // completion requests received
  int64_t completed = 0;  // streams finished with [DONE], and JSON answers
  int64_t failed_500 = 0;
  int64_t dropped = 0;
  int64_t prompt_tokens = 0;  // over completed streams
  int64_t output_tokens = 0;  // over completed streams
  int64_t cached_tokens = 0;  // over completed streams
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
  std::vector<nlohmann::json> requests() const;   // completion request bodies, in arrival order
  std::vector<std::string> auth_headers() const;  // their Authorization headers

 private:
  // POST /v1/completions (chat false) and /v1/chat/completions (chat true).
  void HandleCompletion(const httplib::Request& req, httplib::Response& res, bool chat);
  // The SSE body of a streaming request: placeholder chunks, then StreamEnd.
  // False when the stream was cut (client gone, or drop).
  bool Stream(httplib::DataSink& sink, bool chat, bool drop, int64_t cached, int64_t n_prompt, int64_t max_tokens);
  // The finish chunk, the usage chunk, the counters and [DONE].
  void StreamEnd(httplib::DataSink& sink, bool chat, int64_t cached, int64_t n_prompt, int64_t max_tokens);
  // A "stream": false request: one JSON body.
  void Answer(const nlohmann::json& body, bool chat, int64_t n_prompt, int64_t max_tokens, httplib::Response& res);

  MockOptions opt_;
  std::unique_ptr<httplib::Server> server_;
  std::unique_ptr<PrefixReuseTracker> cache_;
  std::thread thread_;
  int port_ = -1;
  mutable std::mutex mu_;
  MockCounters counters_;                 // guarded by mu_
  std::vector<nlohmann::json> requests_;  // guarded by mu_
  std::vector<std::string> auth_;         // guarded by mu_
};

}  // namespace pg::bench
