// OpenAiClient: a minimal blocking client for an OpenAI-compatible server's
// /v1/chat/completions or /v1/completions, non-streaming, for the eval.
//
// Every Complete() call opens its own HTTP connection (an OpenAiHttp, the
// client that bench shares: client/openai_http.h), so one client may be
// shared by many threads. Failures (transport, HTTP status, malformed JSON)
// are returned in CompletionResult::error, never thrown; no retries.
//
// Thread-safety: immutable after Create; Complete is safe to call concurrently.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "base/status.h"

namespace pg {

class OpenAiHttp;

enum class CompletionEndpoint {
  kChat,         // POST {base}/v1/chat/completions, one user message
  kCompletions,  // POST {base}/v1/completions, raw prompt, stop at "\nQuestion:"
};
const char* CompletionEndpointName(CompletionEndpoint endpoint);  // "chat" / "completions"
Result<CompletionEndpoint> ParseCompletionEndpoint(std::string_view name);

struct ClientConfig {
  std::string url;      // "http[s]://host[:port][/prefix]"; a trailing "/" or "/v1" is dropped
  std::string api_key;  // sent as "Authorization: Bearer K" when non-empty
  std::string model;    // "model" field; omitted when empty
  CompletionEndpoint endpoint = CompletionEndpoint::kChat;
  int max_tokens = 512;      // completion tokens per request
  double temperature = 0.0;  // 0 = greedy
  double timeout_s = 600.0;  // connect + read timeout per request
};

struct CompletionResult {
  bool ok = false;
  std::string text;            // the completion (empty when failed)
  std::string finish_reason;   // "stop", "length", ... as the server sent it
  int completion_tokens = -1;  // usage.completion_tokens, -1 when absent
  double latency_s = 0;        // request start to full response
  std::string error;           // one line, set when !ok
};

class OpenAiClient {
 public:
  // Validates the URL: http:// or https:// (TLS certificates are verified).
  static Result<OpenAiClient> Create(ClientConfig config);

  CompletionResult Complete(const std::string& prompt) const;

  // The first model id listed by GET {base}/v1/models.
  Result<std::string> FirstModelId() const;

  const ClientConfig& config() const { return config_; }
  // "http[s]://host:port" and the path prefix before "/v1" ("" or "/prefix").
  const std::string& host_port() const { return host_port_; }
  const std::string& path_prefix() const { return path_prefix_; }

 private:
  explicit OpenAiClient(ClientConfig config) : config_(std::move(config)) {}
  Result<std::unique_ptr<OpenAiHttp>> Connect() const;  // a fresh connection

  ClientConfig config_;
  std::string host_port_;
  std::string path_prefix_;
};

}  // namespace pg
