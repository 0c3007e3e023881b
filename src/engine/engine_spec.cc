// The engine's side of speculative decoding (docs/speculative.md): drafting
// before Schedule, verification rows in RunForward, acceptance in
// SampleAndAdvance. Engine thread only, like the rest of Engine.
//
// Verification. A decoding sequence has tokens t[0..n) with K/V computed for
// [0, n-1). With a draft d[0..k) it runs positions n-1 .. n-1+k with inputs
// t[n-1], d[0], ..., d[k-1] as one batch entry with logits for every row
// (BatchSeq::all_logits: the rows share attention's K/V reads, and each
// row's arithmetic is exactly a decode row's: the forward pass is
// batch-invariant, model_invariance_test.cc). Row i
// predicts the token at position n+i. The sequence's own Sampler picks a
// token from row 0, 1, ... in turn, as plain decoding would; while the pick
// equals the draft token the next row is valid too, and the first
// mismatching pick (or the pick after the last draft token) ends the step.
//
// Greedy: the picks are the argmax, so the output is bit-identical to
// non-speculative decoding. Sampling: for a deterministic drafter (point mass
// q = [d]) standard rejection sampling accepts d with probability
// min(1, p(d) / 1) = p(d) and otherwise draws from norm(max(0, p - q)) = p
// without d; drawing x ~ p and accepting iff x == d (else emitting x) has
// exactly that law, with one draw per emitted token, so even the RNG stream
// (and a seeded request's output) is the same as without speculation. p is
// the Sampler's processed distribution (penalties, temperature, top-k/p,
// min-p), because the Sampler itself draws.
//
// The draft model (engine_draft.cc) samples its drafts from its own q when
// the request samples: then row i runs the general test, accept d[i] with
// probability min(1, p(d[i]) / q(d[i])), else draw from norm(max(0, p - q))
// (spec/rejection_sampling.h), with the sequence's SpecSequence::rng.
//
// Rollback. After e tokens are emitted, K/V is valid for [0, n-1+e); the
// blocks past that are released (KvCacheManager::TruncateSequence) and only
// blocks full of verified tokens are ever committed to the prefix index.
#include <fmt/format.h>

#include <algorithm>

#include "base/check.h"
#include "base/clock.h"
#include "base/log.h"
#include "engine/engine.h"

namespace pg {

void Engine::ProposeDrafts() {
  bool speculate = true;  // --spec-max-batch: only in small, decode-only steps
  if (const int max = config_.spec.max_batch; max > 0) {
    int64_t running = 0;
    for (const auto& up : scheduler_->running()) {
      ++running;
      speculate = speculate && up->remaining_to_compute() <= 1;
    }
    speculate = speculate && running <= max && scheduler_->n_waiting() == 0;
  }
  for (const auto& up : scheduler_->running()) {
    if (!speculate) {
      up->draft.clear();
      if (up->spec) {  // nor a draft-model proposal this step
        up->spec->model_want = 0;
        up->spec->drafter = -1;
      }
      continue;
    }
    Sequence* s = up.get();
    s->draft.clear();
    // Constrained outputs (src/constrain) decode one token per step: the matcher
    // advances inside Sample, which verification does not feed.
    if (!s->spec || s->constraint || s->remaining_to_compute() != 1 || s->n_generated == 0) continue;
    // Room: the step emits at most k + 1 tokens; all must fit max_tokens and
    // the context, and the k + 1 positions the device tier.
    const int64_t n = static_cast<int64_t>(s->tokens.size());
    int64_t limit = s->request.sampling.max_tokens - s->n_generated - 1;
    limit = std::min(limit, config_.ctx_size - n - 1);
    limit = std::min(limit, info_.max_seq_tokens - s->n_computed - 1);
    limit = std::min(limit, WorthProposing(*s));
    spec_->Propose(*s->spec, s->tokens, static_cast<int>(std::clamp<int64_t>(limit, 0, 1 << 20)), &s->draft);
  }
  if (draft_) ProposeModelDrafts();  // the sequences whose chain reached the draft model
}

// A sequence's next `drafted` draft positions as the planner sees them:
// expected acceptance, and each position's cost from step_cost_.
VerifyCandidate Engine::CandidateOf(const Sequence& s, int drafted) const {
  VerifyCandidate c;
  c.p = spec_->ExpectedAcceptance(*s.spec);
  c.drafted = drafted;
  c.row_s = step_cost_.ExtraRowSeconds(s.n_computed + 2);  // draft position 1 attends to n + 1 keys
  c.row_growth_s = step_cost_.ExtraRowSeconds(1) - step_cost_.ExtraRowSeconds(0);
  return c;
}

// Under --spec-policy goodput, the draft positions that could pass
// PlanDrafts at the last step's ratio: proposing (and reserving KV for)
// positions it will drop costs KV churn for nothing.
int64_t Engine::WorthProposing(const Sequence& s) const {
  if (config_.spec.policy != SpecPolicy::kGoodput || !step_cost_.usable() || spec_ratio_ <= 0) return 1 << 20;
  return KeepAtRatio(CandidateOf(s, config_.spec.draft_max), spec_ratio_);
}

void Engine::PlanDrafts(StepPlan* plan) {
  if (config_.spec.policy != SpecPolicy::kGoodput || !step_cost_.usable() || plan->batch.empty()) return;
  StepShape base;  // the step with every draft removed
  std::vector<VerifyCandidate> cands;
  std::vector<Sequence*> seqs;
  for (Sequence* s : plan->batch) {
    if (s->draft.empty()) {
      base.AddEntry(s->n_computed, s->step_tokens, s->step_reaches_end() ? 1 : 0);
      continue;
    }
    base.AddEntry(s->n_computed, 1, 1);
    cands.push_back(CandidateOf(*s, static_cast<int>(s->draft.size())));
    seqs.push_back(s);
  }
  const VerifyPlan vp =
      PlanVerification(step_cost_.Predict(base), static_cast<int64_t>(plan->batch.size()), cands);
  spec_ratio_ = vp.ratio;  // WorthProposing's bar for the next step
  for (size_t i = 0; i < seqs.size(); ++i)
    if (static_cast<size_t>(vp.keep[i]) < seqs[i]->draft.size()) ShortenDraft(seqs[i], static_cast<size_t>(vp.keep[i]), plan);
}

// The scheduler reserved KV for 1 + k positions; give back what the shorter
// verification no longer writes.
void Engine::ShortenDraft(Sequence* s, size_t keep, StepPlan* plan) {
  const int64_t dropped = static_cast<int64_t>(s->draft.size() - keep);
  totals_.draft_dropped += dropped;
  s->draft.resize(keep);
  s->step_tokens -= dropped;
  plan->n_tokens -= dropped;
  if (keep == 0) s->spec->drafter = -1;  // a plain decode step: nothing to record
  const int64_t positions = s->n_computed + s->step_tokens;
  if (s->allocated_tokens > positions) {
    const Status st = kv_->TruncateSequence(s->id, positions, &s->block_table);
    PG_CHECK_MSG(st.ok(), st.ToString().c_str());
    s->allocated_tokens = positions;
  }
}

void Engine::AddVerifyEntries(const StepPlan& plan, int64_t* n_logits) {
  for (size_t i = 0; i < plan.batch.size(); ++i) {
    Sequence* s = plan.batch[i];
    if (s->draft.empty()) continue;
    const size_t k = s->draft.size();
    PG_CHECK(s->step_tokens == static_cast<int64_t>(k) + 1 && s->remaining_to_compute() == 1);
    s->verify_tokens.assign(1, s->tokens.back());
    s->verify_tokens.insert(s->verify_tokens.end(), s->draft.begin(), s->draft.end());
    // The plan's entry becomes positions n-1 .. n-1+k, with logits for each:
    // one entry, so its rows share the K/V reads of attention.
    BatchSeq& b = batch_[i];
    *n_logits -= b.logit_rows();  // RunForward counted the plan's entry as it was
    b.tokens = s->verify_tokens.data();
    b.n_tokens = static_cast<int64_t>(k) + 1;
    b.want_logits = true;
    b.all_logits = true;
    *n_logits += b.logit_rows();
  }
}

void Engine::CommitFullBlocks(Sequence* s) {
  const int page = kv_->page_tokens();
  while ((s->n_committed_blocks + 1) * page <= s->n_computed) {
    const int64_t b = s->n_committed_blocks;
    kv_->CommitFullBlock(s->id, static_cast<int>(b),
                         std::span<const int32_t>(s->tokens.data() + b * page, static_cast<size_t>(page)));
    s->n_committed_blocks++;
  }
}

bool Engine::ShouldStop(const Sequence& s) const {
  if (EndsOnLastToken(s)) return true;
  return s.n_generated >= s.request.sampling.max_tokens || static_cast<int64_t>(s.tokens.size()) >= config_.ctx_size;
}

void Engine::AdvanceSpeculative(Sequence* s, const float* row0, std::vector<Sequence*>* done) {
  const int64_t V = model_->config().n_vocab;
  const int k = static_cast<int>(s->draft.size());
  // Synthetic acceptance decides the accepted count up front, ignoring the target.
  const int synthetic = config_.spec.synthetic() ? spec_->SyntheticAccepted(*s->spec, k) : -1;
  int emitted = 0, accepted = 0;
  for (int i = 0; i <= k; ++i) {
    const float* row = row0 + static_cast<size_t>(i) * static_cast<size_t>(V);
    ServiceEvent ev;
    ev.kind = ServiceEvent::Kind::kToken;
    int32_t tok;
    if (i < synthetic) {
      tok = s->draft[static_cast<size_t>(i)];  // the draft's token, not the model's
      ev.token.token = tok;
    } else if (const float* q = SampledDraftDistribution(*s, i, k)) {
      tok = VerifySampledDraft(s, row, q, i, &ev.token);  // the draft model's q: min(1, p/q)
    } else {
      tok = s->sampler->Sample(row, V, &ev.token);
    }
    s->tokens.push_back(tok);
    s->n_generated++;
    totals_.generated_tokens++;
    ++emitted;
    if (s->on_event) s->on_event(ev);
    const bool match = i < k && (synthetic >= 0 ? i < synthetic : tok == s->draft[static_cast<size_t>(i)]);
    if (match) ++accepted;
    if (ShouldStop(*s)) {
      done->push_back(s);
      break;
    }
    if (!match) break;
  }
  // K/V is valid for positions [0, old n_computed + emitted): each emitted
  // token but the last was the input of the next verified position.
  s->n_computed += emitted;
  CommitFullBlocks(s);
  Status st = kv_->TruncateSequence(s->id, s->n_computed, &s->block_table);
  PG_CHECK_MSG(st.ok(), st.ToString().c_str());
  s->allocated_tokens = s->n_computed;
  if (draft_) draft_->Rollback(s->id, s->tokens);  // the draft's K/V keeps only the accepted inputs
  spec_->Record(*s->spec, k, accepted);
  s->spec_usage.steps++;
  s->spec_usage.drafted += k;
  s->spec_usage.accepted += accepted;
  s->draft.clear();
}

void Engine::CollectSpecMetrics(const std::vector<DrafterStats>& stats, int64_t dropped, MetricSet* out) const {
  if (!spec_) return;
  auto family = [&](MetricFamily& f, auto value) {
    for (size_t i = 0; i < stats.size(); ++i) f.Add({{"drafter", DrafterName(config_.spec.drafters[i])}}, value(stats[i]));
  };
  family(out->Counter("prosgrow_spec_steps_total", "Verification steps that carried a draft."),
         [](const DrafterStats& d) { return d.steps; });
  family(out->Counter("prosgrow_spec_draft_tokens_total", "Draft tokens verified."),
         [](const DrafterStats& d) { return d.drafted; });
  family(out->Counter("prosgrow_spec_accepted_tokens_total", "Draft tokens accepted."),
         [](const DrafterStats& d) { return d.accepted; });
  family(out->Gauge("prosgrow_spec_acceptance_rate", "Accepted / drafted tokens."), [](const DrafterStats& d) {
    return d.drafted ? static_cast<double>(d.accepted) / static_cast<double>(d.drafted) : 0.0;
  });
  family(out->Gauge("prosgrow_spec_mean_accepted_length",
                    "Tokens emitted per verification step (accepted drafts + the target's token)."),
         [](const DrafterStats& d) {
           return d.steps ? 1.0 + static_cast<double>(d.accepted) / static_cast<double>(d.steps) : 0.0;
         });
  out->Counter("prosgrow_spec_dropped_draft_tokens_total",
               "Proposed draft tokens not verified because their expected tokens were worth less than their cost "
               "(--spec-policy goodput).",
               dropped);
  out->Gauge("prosgrow_spec_synthetic_acceptance",
             "1 when benchmark-only synthetic acceptance is on (outputs are not the model's own).",
             config_.spec.synthetic() ? 1 : 0);
}

}  // namespace pg
