// SpeculativeDecoder: speculative decoding as one part (docs/speculative.md).
// It owns the drafters (spec/speculator.h's chain and the draft model,
// draft_model.h), the verification planner's state (spec/verify_planner.h)
// and the acceptance test, behind four verbs its caller runs each step:
//
//   Propose  before Schedule: a draft for every running decoding sequence
//            (the draft model or the MTP block batched over the sequences
//            whose chain reached it)
//   Plan     after Schedule, under --spec-policy goodput: each draft cut to
//            the positions worth their cost this step (costs from StepCostModel)
//   Verify   building the batch: a drafting sequence's entry becomes its
//            k + 1 positions, with logits at every one (BatchSeq::all_logits)
//   Accept   after the forward pass: the sequence's Sampler picks row by row;
//            while the pick equals the draft the next row counts too. Each
//            pick is handed to the caller's emit, which says when to stop.
//
// The caller keeps the sequence's tokens and K/V: after Accept it advances
// n_computed by the emitted count, commits the full blocks and releases the
// blocks past them. Engine::Step and bench-model's RunSpecDecode both run
// these verbs, so bench-model times the path serve uses.
//
// Verification. A decoding sequence has tokens t[0..n) with K/V computed for
// [0, n-1). With a draft d[0..k) it runs positions n-1 .. n-1+k with inputs
// t[n-1], d[0], ..., d[k-1] as one batch entry (the rows share attention's
// K/V reads; each row's arithmetic is exactly a decode row's: the forward pass
// is batch-invariant, model_invariance_test.cc). Row i predicts position n+i.
//
// Greedy: the picks are the argmax, so the output is bit-identical to
// non-speculative decoding. Sampling with a deterministic drafter (point mass
// q = [d]): drawing x ~ p and accepting iff x == d (else emitting x) is
// standard rejection sampling with one draw per emitted token, so even the RNG
// stream (and a seeded request's output) is the same as without speculation;
// p is the Sampler's processed distribution. The draft model samples its
// drafts from its own q when the request samples: then row i runs the general
// test, accept d[i] with probability min(1, p(d[i]) / q(d[i])), else draw from
// norm(max(0, p - q)) (spec/rejection_sampling.h), with SpecSequence::rng.
//
// Thread-safety: one owner thread (the engine thread), except NewSequence.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "engine/scheduler.h"
#include "engine/sequence.h"
#include "engine/speculative/draft_model.h"
#include "engine/speculative/mtp_drafter.h"
#include "engine/step_cost_model.h"
#include "kv/kv_cache_manager.h"
#include "metrics/metric_set.h"
#include "spec/speculator.h"
#include "spec/verify_planner.h"

namespace pg {

// What bounds a draft: the step emits at most k + 1 tokens, all within the
// context, and k + 1 positions must fit one sequence's device KV.
struct SpecLimits {
  int64_t ctx_size = 0;        // positions per sequence (EngineConfig::ctx_size)
  int64_t max_seq_tokens = 0;  // device KV positions one sequence may hold
  int64_t catchup_budget = 0;  // tokens the draft model's first step may compute in all
};

// The decoder's counters (monotonic), for /metrics.
struct SpecCounters {
  std::vector<DrafterStats> drafters;  // per drafter, SpecConfig order
  int64_t draft_no_room = 0;           // draft-model requests without room in the draft's KV pool
  int64_t draft_dropped = 0;           // proposed draft tokens --spec-policy goodput did not verify
};

class SpeculativeDecoder {
 public:
  // Called once per emitted token with the token and its event (kind
  // kToken); returns true when the sequence must stop (the caller's one stop
  // check), which ends the acceptance.
  using EmitFn = std::function<bool(Sequence* s, int32_t token, ServiceEvent& ev)>;

  static Result<std::unique_ptr<SpeculativeDecoder>> Create(const SpecConfig& config, const SpecLimits& limits);
  // Starts over (bench-model's repetitions): fresh drafters and counters,
  // the draft model's KV freed; the draft model itself stays loaded.
  Status Reset();
  void set_max_seq_tokens(int64_t n) { limits_.max_seq_tokens = n; }

  // --spec draft: loads the draft model (same vocabulary as the target,
  // DraftModel::Load) and then its KV pool of `kv_bytes` (CreateDraftKv).
  Status LoadDraftModel(const std::string& path, const ModelOptions& options, const std::string& target_path,
                        const Model& target, const Tokenizer& target_tokenizer);
  KvLayout DraftLayout(int page_tokens, KvDtype dtype) const { return draft_->Layout(page_tokens, dtype); }
  Status CreateDraftKv(uint64_t kv_bytes, int page_tokens, KvDtype dtype) {
    return draft_->CreateKv(kv_bytes, page_tokens, dtype);
  }

  // --spec mtp: drafts with the target's own NextN block (MtpDrafter::Create
  // refuses a model without one), then its one-layer KV pool (CreateMtpKv).
  Status EnableMtp(const Model& target);
  KvLayout MtpLayout(int page_tokens, KvDtype dtype) const { return mtp_->Layout(page_tokens, dtype); }
  Status CreateMtpKv(uint64_t kv_bytes, int page_tokens, KvDtype dtype) {
    return mtp_->CreateKv(kv_bytes, page_tokens, dtype);
  }
  // After each forward step: the trunk's final hidden rows (every batch
  // token, batch order, n_embd floats each; LogitsRows::hidden) for the MTP
  // drafter. No-op without --spec mtp or without rows.
  void Observe(std::span<Sequence* const> seqs, std::span<const BatchSeq> batch, const float* hidden);

  const SpecConfig& config() const { return speculator_->config(); }
  const DraftModel* draft_model() const { return draft_.get(); }  // null = none
  const MtpDrafter* mtp() const { return mtp_.get(); }            // null = none
  double synthetic_p() const { return speculator_->synthetic_p(); }
  // A new sequence's drafting state. Any thread (reads only the config).
  std::unique_ptr<SpecSequence> NewSequence(uint64_t seed) const { return speculator_->NewSequence(seed); }

  // Propose: drafts for every running decoding sequence (Sequence::draft).
  // `n_waiting`: requests waiting for admission (--spec-max-batch speculates
  // only in small, decode-only steps with none waiting).
  void Propose(std::span<const std::unique_ptr<Sequence>> running, size_t n_waiting, ThreadPool& pool,
               const StepCostModel& cost);
  // Plan: under --spec-policy goodput, shortens each draft in the plan to the
  // positions worth their cost; gives back the KV (kv may be null for a
  // caller with its own arena) the shorter verification no longer writes.
  void Plan(StepPlan* plan, const StepCostModel& cost, KvCacheManager* kv);
  // Verify: s's batch entry b (its plan entry) becomes positions n-1 .. n-1+k
  // with logits at each. Returns the entry's logits rows.
  int64_t Verify(Sequence* s, BatchSeq* b);
  // Accept: verifies s's draft against rows row0 .. row0 + k (each n_vocab
  // floats), emitting every accepted token and the target's next one.
  // Returns the tokens emitted; clears s->draft.
  int Accept(Sequence* s, const float* row0, int64_t n_vocab, const EmitFn& emit);
  // A finished sequence: its tokens join the suffix cache; its draft KV is freed.
  void Finished(const Sequence& s);

  SpecCounters counters() const;
  // The prosgrow_spec_* /metrics families of `c`; the draft model's own
  // (--spec draft) apart, as /metrics has always listed it after the step costs.
  static void CollectMetrics(const SpecConfig& config, const SpecCounters& c, MetricSet* out);
  static void CollectDraftModelMetrics(const SpecCounters& c, MetricSet* out);

 private:
  SpeculativeDecoder(std::unique_ptr<Speculator> speculator, const SpecLimits& limits)
      : speculator_(std::move(speculator)), limits_(limits) {}
  int64_t Room(const Sequence& s, const StepCostModel& cost) const;
  void ProposeWithModel(std::span<const std::unique_ptr<Sequence>> running, ThreadPool& pool);
  VerifyCandidate CandidateOf(const Sequence& s, int drafted, const StepCostModel& cost) const;
  void ShortenDraft(Sequence* s, size_t keep, StepPlan* plan, KvCacheManager* kv);
  // The draft model's q for draft token i, or null (greedy, another drafter,
  // synthetic) for the point-mass path.
  const float* SampledDraftDistribution(const Sequence& s, int i, int k) const;
  int32_t VerifySampledDraft(Sequence* s, const float* row, int64_t n_vocab, const float* q, int i, TokenEvent* ev);

  std::unique_ptr<Speculator> speculator_;
  SpecLimits limits_;
  std::unique_ptr<DraftModel> draft_;  // --spec draft; null = none
  std::unique_ptr<MtpDrafter> mtp_;    // --spec mtp; null = none
  double ratio_ = 0;                   // the last Plan's progress per second (0 = none yet)
  int64_t dropped_ = 0;                // draft tokens Plan cut
  // Step buffers (reused).
  std::vector<DraftRequest> draft_requests_;         // this step's draft-model requests
  std::vector<Sequence*> draft_seqs_;                // their sequences
  std::vector<std::vector<int32_t>> draft_out_;      // their tokens
  std::vector<SeqId> live_;                          // running sequence ids (draft KV kept)
  std::vector<std::pair<int32_t, float>> p_sparse_;  // the Sampler's p at one verify row
  std::vector<float> p_dense_;                       // (n_vocab) the same, dense
};

}  // namespace pg
