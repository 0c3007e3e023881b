// GenerationRunner: one request's trip through the InferenceService, seen
// from the HTTP thread that serves it.
//
// Start() submits the request; the engine thread's callback only copies
// events into a queue (EventChannel). Poll() waits for them on the HTTP
// thread and turns tokens into client-visible text: IncrementalDecoder (no
// split UTF-8), end-of-generation tokens dropped, stop strings cut (then
// the request is cancelled in the engine and reported as finish "stop").
// Destroying an unfinished runner cancels the request, so a client that goes
// away frees its KV.
//
// Thread-safety: one HTTP thread uses a runner; the engine callback touches
// only the shared EventChannel.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "engine/inference_service.h"
#include "server/core/stop_string_filter.h"
#include "tokenizer/tokenizer.h"

namespace pg {

class Histogram;
struct EventChannel;

// Text and tokens that became available in one Poll().
struct GenerationStep {
  std::string text;                // new client-visible text
  std::vector<TokenEvent> tokens;  // generated tokens (EOG excluded), for logprobs
  void Clear() {
    text.clear();
    tokens.clear();
  }
};

struct GenerationResult {
  std::string finish_reason;  // "stop" | "length" | "error" | "cancelled"
  std::string error;          // for "error"
  std::string stop_sequence;  // "stop" at a stop string: which one ("" = EOS or none)
  int64_t prompt_tokens = 0;
  int64_t completion_tokens = 0;
  CacheUsage cache;  // known once admitted() (the first token), final at the finish
  SpecUsage spec;    // speculative decoding counts (usage.speculative)
};

// Latency histograms fed by runners (any may be null).
struct GenerationMetrics {
  Histogram* ttft_s = nullptr;   // arrival -> first token
  Histogram* itl_s = nullptr;    // between consecutive tokens
  Histogram* e2e_s = nullptr;    // arrival -> finish
  Histogram* queue_s = nullptr;  // arrival -> first scheduled (engine's figure)
};

class GenerationRunner {
 public:
  GenerationRunner(InferenceService* service, GenerationRequest request, std::vector<std::string> stops,
                   GenerationMetrics metrics = {});
  ~GenerationRunner();
  GenerationRunner(const GenerationRunner&) = delete;
  GenerationRunner& operator=(const GenerationRunner&) = delete;

  // Submits. ResourceExhausted = queue full, InvalidArgument = does not fit.
  Status Start();
  // Waits up to timeout_s for engine events and appends what they produce to
  // *step. Returns true when finished() (then result() is final).
  bool Poll(double timeout_s, GenerationStep* step);
  // Client gone: cancels in the engine; no more text is produced.
  void Cancel();
  // Control tokens whose text is shown anyway (the tool-call markers of the
  // model's format, ToolCallMarkers): decoding drops control tokens, and a
  // tool-call parser must see them. Call before Start().
  void RenderSpecialTokens(std::vector<int32_t> ids) { render_special_ = std::move(ids); }

  bool finished() const { return finished_; }
  // The engine admitted the prompt: result().cache holds its split (from the
  // first token on; also true once finished).
  bool admitted() const { return admitted_ || finished_; }
  const GenerationResult& result() const { return result_; }
  const std::string& id() const { return request_.id; }
  const Tokenizer& tokenizer() const { return service_->tokenizer(); }

 private:
  void OnToken(const ServiceEvent& ev, double at_s, GenerationStep* step);
  void Stopped();  // a stop string matched: finish "stop" now
  void OnFinish(const FinishEvent& finish, double at_s, GenerationStep* step);
  std::string Decode(int32_t token);  // decoder_, or the text of a RenderSpecialTokens token

  InferenceService* service_;
  GenerationRequest request_;
  GenerationMetrics metrics_;
  std::shared_ptr<EventChannel> channel_;
  IncrementalDecoder decoder_;
  StopStringFilter stop_filter_;
  bool started_ = false;
  bool cancelled_ = false;  // by us: stop string or client gone
  bool finished_ = false;
  bool admitted_ = false;
  int64_t tokens_seen_ = 0;  // completion tokens consumed before any stop
  double last_token_s_ = 0;  // NowSeconds() of the previous token, 0 before the first
  GenerationResult result_;
  std::vector<int32_t> render_special_;
};

}  // namespace pg
