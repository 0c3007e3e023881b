// Engine: owns the model, the tiered KV cache and the scheduler, and runs
// forward steps. It is the InferenceService the HTTP server talks to.
//
// Step() reads top to bottom:
//   AcceptIncoming -> kv.Tick -> scheduler.Schedule -> RunForward ->
//   SampleAndAdvance (commit full blocks, sample, finish) -> PublishMetrics
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
#include <unordered_map>
#include <vector>

#include "base/thread_pool.h"
#include "engine/speculative/draft_model.h"
#include "engine/engine_config.h"
#include "engine/inference_service.h"
#include "engine/kv_event_bridge.h"
#include "engine/scheduler.h"
#include "engine/step_cost_model.h"
#include "kv/kv_cache_manager.h"
#include "metrics/metric_set.h"
#include "model/model.h"
#include "spec/speculator.h"
#include "spec/verify_planner.h"
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
  const DraftModel* draft_model() const { return draft_.get(); }  // --spec draft; null = none
  const EngineConfig& config() const { return config_; }
  CacheCounters cache_counters() const;  // engine thread / caller-driven mode

 private:
  explicit Engine(const EngineConfig& config) : config_(config) {}
  // The KV hint and quota settings of c, in blocks of block_bytes (engine_kv_hints.cc).
  static Status ApplyHintConfig(const EngineConfig& c, size_t block_bytes, KvCacheConfig* kc);
  void AcceptIncoming();
  Status RunForward(const StepPlan& plan);
  void SampleAndAdvance(const StepPlan& plan);
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

  // Speculative decoding (engine_spec.cc; docs/speculative.md).
  // Drafts for every running decoding sequence (before Schedule).
  void ProposeDrafts();
  // After Schedule, under --spec-policy goodput: shortens each draft to the
  // positions worth their cost this step (spec/verify_planner.h, costs from
  // step_cost_).
  void PlanDrafts(StepPlan* plan);
  void ShortenDraft(Sequence* s, size_t keep, StepPlan* plan);
  int64_t WorthProposing(const Sequence& s) const;
  VerifyCandidate CandidateOf(const Sequence& s, int drafted) const;
  // RunForward: a verifying sequence's entry becomes its k + 1 verification
  // positions, with logits at every one (BatchSeq::all_logits).
  void AddVerifyEntries(const StepPlan& plan, int64_t* n_logits);
  // SampleAndAdvance for a verifying sequence: accept while the sampler's
  // token equals the draft, emit, roll back the rejected tail of the KV.
  void AdvanceSpeculative(Sequence* s, const float* row0, std::vector<Sequence*>* done);
  void CommitFullBlocks(Sequence* s);
  bool ShouldStop(const Sequence& s) const;
  // The sequence's last token ends it as EOS does ("stop"): an end-of-
  // generation token (unless ignore_eos) or one of its stop_token_ids, once
  // min_tokens are generated.
  bool EndsOnLastToken(const Sequence& s) const;
  // The tokens min_tokens holds back: every end-of-generation id (unless
  // ignore_eos) and the request's stop_token_ids.
  std::vector<int32_t> EndTokens(const SamplingParams& p) const;
  void CollectSpecMetrics(const std::vector<DrafterStats>& stats, int64_t dropped, MetricSet* out) const;
  // The draft model (engine_draft.cc): loaded at Create with its share of the
  // device KV budget; run for the sequences whose chain reached it.
  Status LoadDraftModel(const KvLayout& target_layout);
  void ProposeModelDrafts();
  // Sampled verification of draft-model token i: q of that draft token, or
  // null (greedy, another drafter, synthetic) for the point-mass path.
  const float* SampledDraftDistribution(const Sequence& s, int i, int k) const;
  // min(1, p/q) test of draft token i against the Sampler's p (row).
  int32_t VerifySampledDraft(Sequence* s, const float* row, const float* q, int i, TokenEvent* ev);
  void CollectDraftMetrics(int64_t no_room, MetricSet* out) const;  // none without a draft model

  EngineConfig config_;
  std::unique_ptr<KvEventBridge> kv_events_;  // --kv-events; declared before kv_ so it outlives it
  ServiceInfo info_;
  std::unique_ptr<Model> model_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<KvCacheManager> kv_;
  std::unique_ptr<Scheduler> scheduler_;
  std::unique_ptr<ThreadPool> pool_;
  ForwardScratch scratch_;
  KvPages pages_;
  SeqId next_seq_id_ = 1;
  std::unique_ptr<Speculator> spec_;  // null = speculation off
  StepCostModel step_cost_;           // fitted to every forward step's wall time
  double spec_ratio_ = 0;             // the last PlanDrafts' progress per second (0 = none yet)
  std::unique_ptr<DraftModel> draft_;  // --spec draft; null = none
  std::vector<DraftRequest> draft_requests_;     // this step's draft-model requests
  std::vector<Sequence*> draft_seqs_;            // their sequences
  std::vector<std::vector<int32_t>> draft_out_;  // their tokens
  std::vector<SeqId> live_;                      // running sequence ids (draft KV kept)
  std::vector<std::pair<int32_t, float>> p_sparse_;  // the Sampler's p at one verify row
  std::vector<float> p_dense_;                   // (n_vocab) the same, dense

  // Step buffers (reused).
  std::vector<BatchSeq> batch_;
  std::vector<float> logits_;

  // Messages from other threads.
  mutable std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::unique_ptr<Sequence>> incoming_;
  std::vector<std::string> cancels_;
  std::vector<std::pair<std::string, double>> hints_;  // (session, ttl); ttl < 0 = release
  int64_t queued_ = 0;  // incoming + waiting, for max_queue

  std::thread thread_;
  std::atomic<bool> stop_{false};

  // Metrics snapshot, written by the engine thread at the end of each step.
  struct Snapshot {
    int64_t waiting = 0, running = 0, loading = 0, batch_tokens = 0, steps = 0, preemptions = 0;
    int64_t prompt_tokens = 0, cached_tokens = 0, cached_device = 0, cached_host = 0, cached_disk = 0;
    int64_t cached_remote = 0;  // fetched from the remote tier (Redis)
    int64_t generated_tokens = 0, finished = 0;
    CacheCounters kv;
    HintCounters hints;  // KV hints and session quotas
    std::vector<DrafterStats> spec;  // per drafter, SpecConfig order
    int64_t draft_no_room = 0;       // draft-model requests without room in the draft's KV pool
    int64_t draft_dropped = 0;       // proposed draft tokens --spec-policy goodput did not verify
    StepCostModel step_cost;         // a copy of step_cost_
  };
  mutable std::mutex metrics_mu_;
  Snapshot snap_;
  Snapshot totals_;  // engine-thread running totals
  std::vector<std::pair<EventCallback, ServiceEvent>> finished_events_;  // engine thread: queued by Finish
};

}  // namespace pg
