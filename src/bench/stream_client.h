// StreamClient: sends one streamed completion request to an OpenAI-compatible
// server (prosgrow, llama.cpp llama-server, vLLM, SGLang) and measures it.
//
// Request: POST /v1/completions {"prompt": [token ids]} (PromptMode::kTokens),
// {"prompt": "text"} (kText, words from TokenSpace::WordFor), or
// POST /v1/chat/completions with one user message holding that text (kChat);
// always "stream": true, "stream_options": {"include_usage": true},
// "temperature": 0, "max_tokens", and "ignore_eos" unless disabled.
// Measured: TTFT (first chunk carrying output), every gap between output
// chunks, E2E (end of stream); usage (prompt/completion tokens,
// prompt_tokens_details.cached_tokens and the prosgrow extension
// prompt_tokens_details.cached_tokens_by_tier {device, host, disk}); else
// llama.cpp's timings {cache_n, prompt_n}; speculative decoding counts from
// usage.speculative, else timings {draft_n, draft_n_accepted}
// (spec_report.h). Output tokens fall back to the
// number of output chunks when usage is absent.
// A request fails on a transport error, a non-200 status, an error event in
// the stream, or a stream that ends without [DONE] or a finish_reason.
// The HTTP side (URL, connection, SSE) is the OpenAiHttp that eval shares
// (client/openai_http.h); this class builds the body and measures.
// Thread-safety: one StreamClient per thread (it owns a keep-alive connection).
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "bench/request_record.h"

namespace pg {
class OpenAiHttp;
}

namespace pg::bench {

enum class PromptMode { kTokens, kText, kChat };
Result<PromptMode> ParsePromptMode(const std::string& s);
const char* PromptModeName(PromptMode m);

struct ClientOptions {
  std::string url;      // "http[s]://host:port" (a trailing "/" or "/v1" is accepted)
  std::string api_key;  // sent as "Authorization: Bearer KEY" when not empty
  std::string model;    // "model" field; may be empty
  PromptMode mode = PromptMode::kTokens;
  double timeout_s = 600;  // read timeout per request
  bool ignore_eos = true;
};

class StreamClient {
 public:
  static Result<std::unique_ptr<StreamClient>> Create(const ClientOptions& opt);
  // Sends the request and fills the measurement fields of *rec: ok, error,
  // http_status, ttft_s, e2e_s, itl_s, prompt/output/cached tokens, tiers,
  // finish_reason. Never throws.
  void Send(const std::vector<int32_t>& prompt, int32_t max_tokens, RequestRecord* rec);

  // GET path; returns the body of a 200 response.
  Result<std::string> Get(const std::string& path);
  OpenAiHttp& http() { return *http_; }

 private:
  StreamClient(const ClientOptions& opt, std::unique_ptr<OpenAiHttp> http);

 public:
  ~StreamClient();

 private:
  ClientOptions opt_;
  std::unique_ptr<OpenAiHttp> http_;  // the shared OpenAI HTTP client (src/client)
};

// Vocabulary size from GET /v1/models: data[0].vocab_size (prosgrow),
// data[0].meta.n_vocab (llama.cpp); NotFound when the server reports neither.
Result<int64_t> QueryVocabSize(StreamClient& client);
// First model id from GET /v1/models.
Result<std::string> QueryModelId(StreamClient& client);

// Sum of every sample of a Prometheus counter `name` (any labels) in a
// /metrics text; NotFound when absent.
Result<double> PrometheusCounter(const std::string& metrics_text, const std::string& name);

}  // namespace pg::bench
