// FakeInferenceService: a deterministic stand-in for the engine, for server
// tests that must not need a model.
//
// One "engine" thread serves up to max_running requests round-robin, one
// token per request per step, sleeping token_delay_s between steps. Each
// request generates the tokens of its reply text (options.reply, or
// reply_fn(request)), then EOS ("stop"); max_tokens ends it with "length";
// ignore_eos repeats the reply. Logprobs are synthetic but well-formed.
// A prompt sharing a prefix with an earlier prompt reports that prefix as
// cached, split over tiers by options.cache_split (device/host/disk weights).
//
// Thread-safety: all methods may be called from any thread, as the
// InferenceService contract requires; callbacks run on the engine thread.
#pragma once

#include <atomic>
#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "engine/inference_service.h"
#include "tokenizer/tokenizer.h"

namespace pg {

struct FakeServiceOptions {
  std::string model_name = "fake-model";
  int64_t n_ctx = 2048;
  std::string chat_template;  // "" = none (the server falls back)
  std::string reply = "Hello from the fake engine!";
  std::function<std::string(const GenerationRequest&)> reply_fn;  // overrides reply when set
  double token_delay_s = 0;                                       // sleep per engine step
  int max_running = 256;                                          // served concurrently
  int max_queue = 1024;                                     // waiting beyond max_running; more -> ResourceExhausted
  int device_weight = 1, host_weight = 0, disk_weight = 0;  // how cached tokens split over tiers
  bool ready = true;
};

class FakeInferenceService final : public InferenceService {
 public:
  FakeInferenceService(std::unique_ptr<Tokenizer> tokenizer, FakeServiceOptions options);
  ~FakeInferenceService() override;

  // A small byte-level BPE tokenizer (ChatML special tokens, EOS <|im_end|>)
  // trained in memory, so tests need no files.
  static Result<std::unique_ptr<Tokenizer>> MakeTestTokenizer();

  const ServiceInfo& info() const override { return info_; }
  const Tokenizer& tokenizer() const override { return *tokenizer_; }
  bool ready() const override { return ready_.load(); }
  Status Submit(GenerationRequest request, EventCallback on_event) override;
  void Cancel(const std::string& request_id) override;
  void ReleaseSession(const std::string& session_id) override;
  void NoteToolCall(const std::string& session_id) override;
  std::string MetricsText() const override;

  // Test hooks.
  void set_ready(bool ready) { ready_.store(ready); }
  int64_t cancelled_count() const { return cancelled_total_.load(); }
  int64_t running_count() const;
  std::vector<std::string> tool_call_sessions() const;
  std::vector<std::string> released_sessions() const;
  // The last request submitted (prompt, sampling, session...).
  GenerationRequest last_request() const;

 private:
  struct Active {
    GenerationRequest request;
    EventCallback on_event;
    std::vector<int32_t> reply;  // tokens to emit, then EOS
    int64_t produced = 0;
    int64_t cached = 0;
    double first_scheduled_s = 0;
    double first_token_s = 0;
    bool cancelled = false;
  };

  void Loop();
  void Step(std::vector<std::shared_ptr<Active>>* running);
  void Finish(Active* a, const std::string& reason, double now);
  CacheUsage CacheOf(const Active& a) const;  // the cache split reported for a
  int64_t CachedPrefix(const std::vector<int32_t>& prompt);

  std::unique_ptr<Tokenizer> tokenizer_;
  FakeServiceOptions options_;
  ServiceInfo info_;
  std::atomic<bool> ready_;

  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::deque<std::shared_ptr<Active>> queued_;
  std::set<std::string> cancel_requests_;
  std::vector<std::vector<int32_t>> seen_prompts_;
  std::vector<std::string> tool_call_sessions_, released_sessions_;
  GenerationRequest last_request_;
  int64_t running_ = 0;
  bool stop_ = false;
  std::atomic<int64_t> cancelled_total_{0};
  std::atomic<int64_t> finished_total_{0};
  std::thread thread_;
};

}  // namespace pg
