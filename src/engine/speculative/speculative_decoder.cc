#include "engine/speculative/speculative_decoder.h"

#include <algorithm>

#include "base/check.h"
#include "spec/rejection_sampling.h"
#include "spec/verify_planner.h"

namespace pg {
namespace {

// Trunk rows a sequence not drafting may leave waiting for the MTP block.
constexpr int64_t kMtpCatchUpRows = 256;

}  // namespace

Result<std::unique_ptr<SpeculativeDecoder>> SpeculativeDecoder::Create(const SpecConfig& config,
                                                                       const SpecLimits& limits) {
  PG_ASSIGN_OR_RETURN(std::unique_ptr<Speculator> speculator, Speculator::Create(config));
  return std::unique_ptr<SpeculativeDecoder>(new SpeculativeDecoder(std::move(speculator), limits));
}

Status SpeculativeDecoder::Reset() {
  PG_ASSIGN_OR_RETURN(speculator_, Speculator::Create(speculator_->config()));
  if (draft_) draft_->Retain({});
  if (mtp_) mtp_->Retain({});
  ratio_ = 0;
  dropped_ = 0;
  return Status::Ok();
}

Status SpeculativeDecoder::LoadDraftModel(const std::string& path, const ModelOptions& options,
                                          const std::string& target_path, const Model& target,
                                          const Tokenizer& target_tokenizer) {
  PG_ASSIGN_OR_RETURN(draft_, DraftModel::Load(path, options, target_path, target, target_tokenizer));
  return Status::Ok();
}

Status SpeculativeDecoder::EnableMtp(const Model& target) {
  PG_ASSIGN_OR_RETURN(mtp_, MtpDrafter::Create(target));
  return Status::Ok();
}

void SpeculativeDecoder::Observe(std::span<Sequence* const> seqs, std::span<const BatchSeq> batch,
                                 const float* hidden) {
  if (!mtp_ || !hidden) return;
  const int64_t D = mtp_->block().config().n_embd;
  int64_t t = 0;
  for (size_t i = 0; i < batch.size(); ++i) {
    mtp_->Observe(seqs[i]->id, batch[i].start_pos, batch[i].n_tokens, hidden + t * D);
    t += batch[i].n_tokens;
  }
}

// Room for a draft: k + 1 emitted tokens within max_tokens and the context,
// k + 1 positions within the device tier, and (goodput) the positions that
// could pass Plan at the last step's ratio: proposing (and reserving KV for)
// positions it will drop costs KV churn for nothing.
int64_t SpeculativeDecoder::Room(const Sequence& s, const StepCostModel& cost) const {
  const int64_t n = static_cast<int64_t>(s.tokens.size());
  int64_t limit = s.request.sampling.max_tokens - s.n_generated - 1;
  limit = std::min(limit, limits_.ctx_size - n - 1);
  limit = std::min(limit, limits_.max_seq_tokens - s.n_computed - 1);
  if (config().policy == SpecPolicy::kGoodput && cost.usable() && ratio_ > 0)
    limit = std::min<int64_t>(limit, KeepAtRatio(CandidateOf(s, config().draft_max, cost), ratio_));
  return limit;
}

void SpeculativeDecoder::Propose(std::span<const std::unique_ptr<Sequence>> running, size_t n_waiting, ThreadPool& pool,
                                 const StepCostModel& cost) {
  bool speculate = true;  // --spec-max-batch: only in small, decode-only steps
  if (const int max = config().max_batch; max > 0) {
    for (const auto& up : running) speculate = speculate && up->remaining_to_compute() <= 1;
    speculate = speculate && static_cast<int64_t>(running.size()) <= max && n_waiting == 0;
  }
  for (const auto& up : running) {
    Sequence* s = up.get();
    s->draft.clear();
    if (!speculate) {
      if (s->spec) {  // nor a draft-model proposal this step
        s->spec->model_want = 0;
        s->spec->drafter = -1;
      }
      continue;
    }
    // Constrained outputs (src/constrain) decode one token per step: the matcher
    // advances inside Sample, which verification does not feed.
    if (!s->spec || s->constraint || s->remaining_to_compute() != 1 || s->n_generated == 0) continue;
    const int64_t limit = Room(*s, cost);
    speculator_->Propose(*s->spec, s->tokens, static_cast<int>(std::clamp<int64_t>(limit, 0, 1 << 20)), &s->draft);
  }
  if (draft_ || mtp_) ProposeWithModel(running, pool);  // the sequences whose chain reached the draft model
}

void SpeculativeDecoder::ProposeWithModel(std::span<const std::unique_ptr<Sequence>> running, ThreadPool& pool) {
  live_.clear();
  draft_seqs_.clear();
  for (const auto& up : running) {
    live_.push_back(up->id);
    if (up->spec && up->spec->model_want > 0) draft_seqs_.push_back(up.get());
  }
  // Finished, cancelled and preempted sequences free their draft KV.
  if (draft_) draft_->Retain(live_);
  if (mtp_) mtp_->Retain(live_);
  const size_t n_drafting = draft_seqs_.size();
  // --spec mtp: a sequence not drafting now (prefilling, constrained) with
  // many trunk rows waiting catches the block up (want 0), so a prompt's rows
  // never pile up in memory.
  if (mtp_)
    for (const auto& up : running)
      if (!(up->spec && up->spec->model_want > 0) && up->n_computed > 0 && mtp_->PendingRows(up->id) >= kMtpCatchUpRows)
        draft_seqs_.push_back(up.get());
  if (draft_seqs_.empty()) return;
  if (draft_out_.size() < draft_seqs_.size()) draft_out_.resize(draft_seqs_.size());
  draft_requests_.clear();
  for (size_t i = 0; i < draft_seqs_.size(); ++i) {
    Sequence* s = draft_seqs_[i];
    DraftRequest r;
    r.id = s->id;
    // A catch-up: the tokens through the first not computed (the trunk's rows reach n_computed - 1).
    r.context = i < n_drafting ? std::span<const int32_t>(s->tokens)
                               : std::span<const int32_t>(s->tokens.data(), static_cast<size_t>(s->n_computed + 1));
    r.want = i < n_drafting ? s->spec->model_want : 0;
    r.sampling = &s->request.sampling;
    // Seeded requests: the seed alone, so the same request drafts the same tokens again.
    r.seed = (s->request.sampling.has_seed ? s->request.sampling.seed
                                           : s->request.sampling.seed ^ std::hash<std::string>{}(s->request.id)) ^
             0xd1b54a32d192ed03ull;
    r.out = &draft_out_[i];
    draft_requests_.push_back(r);
  }
  // The catch-up (the prompt's draft prefill) shares the step's token budget.
  if (draft_)
    draft_->Propose(draft_requests_, pool, limits_.catchup_budget);
  else
    mtp_->Propose(draft_requests_, pool, limits_.catchup_budget);
  for (size_t i = 0; i < n_drafting; ++i) {
    Sequence* s = draft_seqs_[i];
    speculator_->ProposeWithModel(*s->spec, s->tokens, draft_out_[i], &s->draft);
  }
}

// A sequence's next `drafted` draft positions as the planner sees them:
// expected acceptance, and each position's cost from the step-cost model.
VerifyCandidate SpeculativeDecoder::CandidateOf(const Sequence& s, int drafted, const StepCostModel& cost) const {
  VerifyCandidate c;
  c.p = speculator_->ExpectedAcceptance(*s.spec);
  c.drafted = drafted;
  c.row_s = cost.ExtraRowSeconds(s.n_computed + 2);  // draft position 1 attends to n + 1 keys
  c.row_growth_s = cost.ExtraRowSeconds(1) - cost.ExtraRowSeconds(0);
  return c;
}

void SpeculativeDecoder::Plan(StepPlan* plan, const StepCostModel& cost, KvCacheManager* kv) {
  if (config().policy != SpecPolicy::kGoodput || !cost.usable() || plan->batch.empty()) return;
  StepShape base;  // the step with every draft removed
  std::vector<VerifyCandidate> cands;
  std::vector<Sequence*> seqs;
  for (Sequence* s : plan->batch) {
    if (s->draft.empty()) {
      base.AddEntry(s->n_computed, s->step_tokens, s->step_reaches_end() ? 1 : 0);
      continue;
    }
    base.AddEntry(s->n_computed, 1, 1);
    cands.push_back(CandidateOf(*s, static_cast<int>(s->draft.size()), cost));
    seqs.push_back(s);
  }
  const VerifyPlan vp = PlanVerification(cost.Predict(base), static_cast<int64_t>(plan->batch.size()), cands);
  ratio_ = vp.ratio;  // Room's bar for the next step
  for (size_t i = 0; i < seqs.size(); ++i)
    if (static_cast<size_t>(vp.keep[i]) < seqs[i]->draft.size())
      ShortenDraft(seqs[i], static_cast<size_t>(vp.keep[i]), plan, kv);
}

// The scheduler reserved KV for 1 + k positions; give back what the shorter
// verification no longer writes.
void SpeculativeDecoder::ShortenDraft(Sequence* s, size_t keep, StepPlan* plan, KvCacheManager* kv) {
  const int64_t dropped = static_cast<int64_t>(s->draft.size() - keep);
  dropped_ += dropped;
  s->draft.resize(keep);
  s->step_tokens -= dropped;
  plan->n_tokens -= dropped;
  if (keep == 0) s->spec->drafter = -1;  // a plain decode step: nothing to record
  const int64_t positions = s->n_computed + s->step_tokens;
  if (kv && s->allocated_tokens > positions) {
    const Status st = kv->TruncateSequence(s->id, positions, &s->block_table);
    PG_CHECK_MSG(st.ok(), st.ToString().c_str());
    s->allocated_tokens = positions;
  }
}

int64_t SpeculativeDecoder::Verify(Sequence* s, BatchSeq* b) {
  const size_t k = s->draft.size();
  PG_CHECK(s->step_tokens == static_cast<int64_t>(k) + 1 && s->remaining_to_compute() == 1);
  s->verify_tokens.assign(1, s->tokens.back());
  s->verify_tokens.insert(s->verify_tokens.end(), s->draft.begin(), s->draft.end());
  // One entry, so its rows share the K/V reads of attention.
  b->tokens = s->verify_tokens.data();
  b->n_tokens = static_cast<int64_t>(k) + 1;
  b->want_logits = true;
  b->all_logits = true;
  return b->logit_rows();
}

int SpeculativeDecoder::Accept(Sequence* s, const float* row0, int64_t n_vocab, const EmitFn& emit) {
  const int k = static_cast<int>(s->draft.size());
  // Synthetic acceptance decides the accepted count up front, ignoring the target.
  const int synthetic = config().synthetic() ? speculator_->SyntheticAccepted(*s->spec, k) : -1;
  int emitted = 0, accepted = 0;
  for (int i = 0; i <= k; ++i) {
    const float* row = row0 + static_cast<size_t>(i) * static_cast<size_t>(n_vocab);
    ServiceEvent ev;
    ev.kind = ServiceEvent::Kind::kToken;
    int32_t tok;
    if (i < synthetic) {
      tok = s->draft[static_cast<size_t>(i)];  // the draft's token, not the model's
      ev.token.token = tok;
    } else if (const float* q = SampledDraftDistribution(*s, i, k)) {
      tok = VerifySampledDraft(s, row, n_vocab, q, i, &ev.token);  // the draft model's q: min(1, p/q)
    } else {
      tok = s->sampler->Sample(row, n_vocab, &ev.token);
    }
    ++emitted;
    const bool match = i < k && (synthetic >= 0 ? i < synthetic : tok == s->draft[static_cast<size_t>(i)]);
    if (match) ++accepted;
    if (emit(s, tok, ev) || !match) break;
  }
  if (draft_) draft_->Rollback(s->id, s->tokens);  // the draft's K/V keeps only the accepted inputs
  speculator_->Record(*s->spec, k, accepted);
  s->spec_usage.steps++;
  s->spec_usage.drafted += k;
  s->spec_usage.accepted += accepted;
  s->draft.clear();
  return emitted;
}

const float* SpeculativeDecoder::SampledDraftDistribution(const Sequence& s, int i, int k) const {
  if (!draft_ || i >= k || config().synthetic() || s.spec->drafter != speculator_->model_drafter() ||
      s.request.sampling.temperature < Sampler::kGreedyBelow)
    return nullptr;
  return draft_->DraftDistribution(s.id, i);
}

int32_t SpeculativeDecoder::VerifySampledDraft(Sequence* s, const float* row, int64_t n_vocab, const float* q, int i,
                                               TokenEvent* ev) {
  s->sampler->Distribution(row, n_vocab, &p_sparse_);  // p: penalties, bias, temperature, top-k/p, min-p
  p_dense_.assign(static_cast<size_t>(n_vocab), 0.0f);
  for (const auto& [id, p] : p_sparse_) p_dense_[static_cast<size_t>(id)] = p;
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double u_accept = u(s->spec->rng), u_residual = u(s->spec->rng);
  const RejectionStep r = SpeculativeRejection(p_dense_, std::span<const float>(q, static_cast<size_t>(n_vocab)),
                                               s->draft[static_cast<size_t>(i)], u_accept, u_residual);
  s->sampler->Accept(row, n_vocab, r.token, ev);
  return r.token;
}

void SpeculativeDecoder::Finished(const Sequence& s) {
  speculator_->Finished(s.tokens, s.cache.cached_tokens);
  if (draft_) draft_->Free(s.id);
  if (mtp_) mtp_->Free(s.id);
}

SpecCounters SpeculativeDecoder::counters() const {
  SpecCounters c;
  c.drafters = speculator_->stats();
  c.draft_no_room = draft_ ? draft_->no_room() : (mtp_ ? mtp_->no_room() : 0);
  c.draft_dropped = dropped_;
  return c;
}

void SpeculativeDecoder::CollectMetrics(const SpecConfig& config, const SpecCounters& c, MetricSet* out) {
  auto family = [&](MetricFamily& f, auto value) {
    for (size_t i = 0; i < c.drafters.size(); ++i)
      f.Add({{"drafter", DrafterName(config.drafters[i])}}, value(c.drafters[i]));
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
               c.draft_dropped);
  out->Gauge("prosgrow_spec_synthetic_acceptance",
             "1 when benchmark-only synthetic acceptance is on (outputs are not the model's own).",
             config.synthetic() ? 1 : 0);
}

void SpeculativeDecoder::CollectDraftModelMetrics(const SpecCounters& c, MetricSet* out) {
  out->Counter("prosgrow_spec_draft_model_no_room_total",
               "Draft-model proposals skipped because the draft's KV pool was full.", c.draft_no_room);
}

}  // namespace pg
