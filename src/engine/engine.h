// Engine: owns the model, its executor, the tiered KV cache, the scheduler
// and the speculative decoder, and runs steps. It is the InferenceService the
// HTTP server talks to.
//
// Step() reads top to bottom:
//   AcceptIncoming -> kv.Tick -> spec.Propose -> scheduler.Schedule ->
//   spec.Plan -> RunForward (executor.Forward; spec.Verify builds the drafting
//   entries) -> SampleAndAdvance (Emit: sample or spec.Accept, one commit path
//   and one stop check) -> PublishMetrics
//
// Threading: Start() runs Step() in a loop on one engine thread, which alone
// touches the scheduler, the sequences and the KV structures. Submit, Cancel,
// ReleaseSession, NoteToolCall and MetricsText may be called from any thread;
// they only exchange messages with the engine thread under a mutex. Without
// Start(), a caller (the generate CLI, tests) drives Step() itself.
#pragma once

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "base/thread_pool.h"
#include "engine/engine_config.h"
#include "engine/engine_snapshot.h"
#include "engine/executor.h"
#include "engine/inference_service.h"
#include "engine/kv_event_bridge.h"
#include "engine/scheduler.h"
#include "engine/speculative/speculative_decoder.h"
#include "engine/step_cost_model.h"
#include "kv/kv_cache_manager.h"
#include "metrics/metric_set.h"
#include "model/model.h"
#include "tokenizer/tokenizer.h"

namespace pg {

class Engine final : public InferenceService {
 public:
  static Result<std::unique_ptr<Engine>> Create(const EngineConfig& config);
  ~Engine() override;

  // InferenceService.
  const ServiceInfo& info() const override { return info_; }
  const Tokenizer& tokenizer() const override { return *tokenizer_; }
  bool ready() const override { return true; }
  Status Submit(GenerationRequest request, EventCallback on_event) override;
  void Cancel(const std::string& request_id) override;
  void ReleaseSession(const std::string& session_id) override;
  void NoteToolCall(const std::string& session_id) override;
  std::string MetricsText() const override;
  std::vector<uint64_t> PromptBlockHashes(const std::vector<int32_t>& prompt, const std::string& salt) const override;

  // Runs the engine loop on its own thread / stops it (waits for the step).
  void Start();
  void Stop();

  // One scheduling + forward step. Engine thread (or the driving caller) only.
  void Step();
  // Steps until no request is waiting, loading or running. Caller-driven mode.
  void RunUntilIdle();
  // Flushes cached KV to the disk tier (clean shutdown). Caller-driven mode.
  Status FlushCache();

  const Model& model() const { return *model_; }
  // --spec draft; null = none.
  const DraftModel* draft_model() const { return spec_ ? spec_->draft_model() : nullptr; }
  const MtpDrafter* mtp_drafter() const { return spec_ ? spec_->mtp() : nullptr; }
  const EngineConfig& config() const { return config_; }
  CacheCounters cache_counters() const;  // engine thread / caller-driven mode

 private:
  // A session message from another thread: ReleaseSession drops the
  // session's retention; NoteToolCall retains it for ttl_s.
  struct SessionNote {
    enum class Kind { kRelease, kRetain };
    Kind kind;
    std::string session;
    double ttl_s = 0;  // kRetain
  };

  explicit Engine(const EngineConfig& config) : config_(config) {}
  // Create's parts: the KV cache (after the draft model took its share of
  // the device budget), the speculative decoder, the service facts.
  Status CreateKvCache(const KvLayout& layout);
  Status CreateSpeculation(const KvLayout& layout);
  void FillInfo();
  void AcceptIncoming();
  Status RunForward(const StepPlan& plan);
  void SampleAndAdvance(const StepPlan& plan);
  // The one place a token joins a sequence: appends it, counts it, hands
  // the event on; true when the sequence must stop (the one stop check).
  bool Emit(Sequence* s, int32_t token, ServiceEvent& ev);
  bool ShouldStop(const Sequence& s) const;
  // The sequence's last token ends it as EOS does ("stop"): an end-of-
  // generation token (unless ignore_eos) or one of its stop_token_ids, once
  // min_tokens are generated.
  bool EndsOnLastToken(const Sequence& s) const;
  // The tokens min_tokens holds back: every end-of-generation id (unless
  // ignore_eos) and the request's stop_token_ids.
  std::vector<int32_t> EndTokens(const SamplingParams& p) const;
  // The one commit path: publishes every block that became full of computed
  // tokens; release_tail (after a verification) gives back the blocks past
  // n_computed, the rejected drafts' positions.
  void CommitComputed(Sequence* s, bool release_tail);
  // Removes the sequence (freeing its KV), counts it, and queues its finish
  // event; DeliverFinished() publishes the metrics snapshot once, then calls
  // the queued callbacks. Step() delivers after the cancels and at its end.
  void Finish(Sequence* seq, const std::string& reason, const std::string& error = "");
  void DeliverFinished();
  // The request's kv_hints (engine_kv_hints.cc): on arrival prefetch, and
  // retain/pin of what is cached already; when it finished, retain/pin of the
  // whole prefix and demote.
  void ApplyKvHints(const Sequence& s, bool finished);
  void PublishMetrics(const StepPlan& plan);
  // Copies the running totals, queue/running counts and KV counters into the
  // /metrics snapshot (engine thread; also on every finish, before its event).
  void PublishSnapshot();
  void Loop();

  EngineConfig config_;
  std::unique_ptr<KvEventBridge> kv_events_;  // --kv-events; declared before kv_ so it outlives it
  ServiceInfo info_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<ThreadPool> pool_;
  std::unique_ptr<Executor> executor_;  // runs every forward step (the backend's)
  std::unique_ptr<KvCacheManager> kv_;
  std::unique_ptr<Scheduler> scheduler_;
  SeqId next_seq_id_ = 1;
  std::unique_ptr<SpeculativeDecoder> spec_;  // null = speculation off
  StepCostModel step_cost_;                   // fitted to every forward step's wall time

  // Step buffers (reused).
  std::vector<BatchSeq> batch_;
  LogitsRows logits_;  // the last step's rows (the executor's memory)
  std::vector<Sequence*> done_;

  // Messages from other threads.
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Sequence>> incoming_;
  std::vector<std::string> cancels_;
  std::vector<SessionNote> session_notes_;
  int64_t queued_ = 0;  // incoming + waiting, for max_queue

  std::thread thread_;
  std::atomic<bool> stop_{false};

  // Metrics snapshot, written by the engine thread at the end of each step.
  mutable std::mutex metrics_mu_;
  EngineSnapshot snap_;
  EngineSnapshot totals_;                                                // engine-thread running totals
  std::vector<std::pair<EventCallback, ServiceEvent>> finished_events_;  // engine thread: queued by Finish
};

}  // namespace pg
