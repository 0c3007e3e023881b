// The engine's side of the draft-model drafter (--spec draft
// --spec-draft-model FILE; docs/speculative.md "Draft model"): loading it with
// its share of the device KV budget, running it for the sequences whose
// drafter chain reached it (one batched draft Forward per draft step), and
// the min(1, p/q) verification of its sampled drafts. Engine thread only.
#include <fmt/format.h>

#include <algorithm>

#include "base/log.h"
#include "engine/engine.h"
#include "spec/rejection_sampling.h"

namespace pg {

Status Engine::LoadDraftModel(const KvLayout& target_layout) {
  EngineConfig& c = config_;
  PG_RETURN_IF_ERROR(ValidateSpecConfig(c.spec));
  PG_ASSIGN_OR_RETURN(draft_, DraftModel::Load(c.spec.draft_model, ModelOptionsFor(c.attention), c.model_path,
                                               *model_, *tokenizer_));
  const KvLayout dl = draft_->Layout(target_layout.page_tokens, target_layout.dtype);
  // The two pools hold the same number of tokens: --kv-device-mem splits in
  // proportion to the two models' KV bytes per token. The host tier keeps
  // its size (4x the whole device budget by default).
  const double t = static_cast<double>(target_layout.block_bytes()), d = static_cast<double>(dl.block_bytes());
  const auto draft_bytes = static_cast<uint64_t>(static_cast<double>(c.kv_device_bytes) * d / (t + d));
  if (c.policy == ServePolicy::kOptimized && c.kv_host_bytes == 0) c.kv_host_bytes = HostTierBytes(c);
  PG_RETURN_IF_ERROR(draft_->CreateKv(draft_bytes, target_layout.page_tokens, target_layout.dtype));
  c.kv_device_bytes -= draft_bytes;
  PG_LOG_INFO("engine: draft model {} ({}); device KV split {:.1f} MiB target / {:.1f} MiB draft ({} blocks, {})",
              c.spec.draft_model, draft_->model().config().Summary(), static_cast<double>(c.kv_device_bytes) / (1 << 20),
              static_cast<double>(draft_bytes) / (1 << 20), draft_->kv().device_blocks(), dl.ToString());
  return Status::Ok();
}

void Engine::ProposeModelDrafts() {
  live_.clear();
  draft_seqs_.clear();
  for (const auto& up : scheduler_->running()) {
    live_.push_back(up->id);
    if (up->spec && up->spec->model_want > 0) draft_seqs_.push_back(up.get());
  }
  draft_->Retain(live_);  // finished, cancelled and preempted sequences free their draft KV
  if (draft_seqs_.empty()) return;
  if (draft_out_.size() < draft_seqs_.size()) draft_out_.resize(draft_seqs_.size());
  draft_requests_.clear();
  for (size_t i = 0; i < draft_seqs_.size(); ++i) {
    Sequence* s = draft_seqs_[i];
    DraftRequest r;
    r.id = s->id;
    r.context = s->tokens;
    r.want = s->spec->model_want;
    r.sampling = &s->request.sampling;
    // Seeded requests: the seed alone, so the same request drafts the same tokens again.
    r.seed = (s->request.sampling.has_seed ? s->request.sampling.seed
                                           : s->request.sampling.seed ^ std::hash<std::string>{}(s->request.id)) ^
             0xd1b54a32d192ed03ull;
    r.out = &draft_out_[i];
    draft_requests_.push_back(r);
  }
  // The catch-up (the prompt's draft prefill) shares the step's token budget.
  draft_->Propose(draft_requests_, *pool_, config_.max_batch_tokens);
  for (size_t i = 0; i < draft_seqs_.size(); ++i) {
    Sequence* s = draft_seqs_[i];
    spec_->ProposeWithModel(*s->spec, s->tokens, draft_out_[i], &s->draft);
  }
}

const float* Engine::SampledDraftDistribution(const Sequence& s, int i, int k) const {
  if (!draft_ || i >= k || config_.spec.synthetic() || s.spec->drafter != spec_->model_drafter() ||
      s.request.sampling.temperature < Sampler::kGreedyBelow)
    return nullptr;
  return draft_->DraftDistribution(s.id, i);
}

int32_t Engine::VerifySampledDraft(Sequence* s, const float* row, const float* q, int i, TokenEvent* ev) {
  const int64_t V = model_->config().n_vocab;
  s->sampler->Distribution(row, V, &p_sparse_);  // p: penalties, bias, temperature, top-k/p, min-p
  p_dense_.assign(static_cast<size_t>(V), 0.0f);
  for (const auto& [id, p] : p_sparse_) p_dense_[static_cast<size_t>(id)] = p;
  std::uniform_real_distribution<double> u(0.0, 1.0);
  const double u_accept = u(s->spec->rng), u_residual = u(s->spec->rng);
  const RejectionStep r = SpeculativeRejection(p_dense_, std::span<const float>(q, static_cast<size_t>(V)),
                                               s->draft[static_cast<size_t>(i)], u_accept, u_residual);
  s->sampler->Accept(row, V, r.token, ev);
  return r.token;
}

void Engine::CollectDraftMetrics(int64_t no_room, MetricSet* out) const {
  if (!draft_) return;
  out->Counter("prosgrow_spec_draft_model_no_room_total",
               "Draft-model proposals skipped because the draft's KV pool was full.", no_room);
}

}  // namespace pg
