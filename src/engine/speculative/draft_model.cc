#include "engine/speculative/draft_model.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/check.h"
#include "base/log.h"
#include "engine/speculative/drafter_kv.h"

namespace pg {
namespace {

constexpr size_t kNoRow = DraftBatch::kNoRow;

std::string Short(const std::string& s) { return s.size() > 24 ? s.substr(0, 24) + "..." : s; }

}  // namespace

std::string VocabularyDifference(const Tokenizer& a, const Tokenizer& b) {
  if (a.n_vocab() != b.n_vocab()) return fmt::format("{} tokens vs {}", a.n_vocab(), b.n_vocab());
  for (int32_t id = 0; id < a.n_vocab(); ++id) {
    if (a.TokenText(id) != b.TokenText(id))
      return fmt::format("token {} is '{}' vs '{}'", id, Short(a.TokenText(id)), Short(b.TokenText(id)));
    if (a.token_type(id) != b.token_type(id))
      return fmt::format("token {} has type {} vs {}", id, static_cast<int>(a.token_type(id)),
                         static_cast<int>(b.token_type(id)));
    if (a.IsEog(id) != b.IsEog(id)) return fmt::format("token {} ends generation in one only", id);
  }
  if (a.bos_id() != b.bos_id()) return fmt::format("BOS {} vs {}", a.bos_id(), b.bos_id());
  if (a.eos_id() != b.eos_id()) return fmt::format("EOS {} vs {}", a.eos_id(), b.eos_id());
  return "";
}

Result<std::unique_ptr<DraftModel>> DraftModel::Load(const std::string& path, const ModelOptions& options,
                                                     const std::string& target_path, const Model& target,
                                                     const Tokenizer& target_tokenizer) {
  std::unique_ptr<DraftModel> d(new DraftModel());
  auto model = Model::Load(path, options);
  if (!model.ok()) return InvalidArgument(fmt::format("--spec-draft-model {}: {}", path, model.status().message()));
  d->model_ = std::move(*model);
  auto tok = d->model_->source().LoadTokenizer();
  if (!tok.ok()) return InvalidArgument(fmt::format("--spec-draft-model {}: {}", path, tok.status().message()));
  std::string diff = VocabularyDifference(target_tokenizer, **tok);
  if (diff.empty() && d->model_->config().n_vocab != target.config().n_vocab)
    diff = fmt::format("n_vocab {} vs {}", target.config().n_vocab, d->model_->config().n_vocab);
  if (!diff.empty())
    return InvalidArgument(
        fmt::format("--spec-draft-model: the draft model {} does not share the vocabulary of the "
                    "target model {} ({}, target vs draft)",
                    path, target_path, diff));
  return d;
}

KvLayout DraftModel::Layout(int page_tokens, KvDtype dtype) const {
  return model_->config().KvLayoutFor(page_tokens, dtype);
}

Status DraftModel::CreateKv(uint64_t device_bytes, int page_tokens, KvDtype dtype) {
  PG_ASSIGN_OR_RETURN(kv_, CreateDrafterKv(Layout(page_tokens, dtype), model_->identity() + ":draft", device_bytes,
                                           "draft model KV", &pages_));
  return Status::Ok();
}

bool DraftModel::Reserve(SeqId id, Seq& s, int64_t tokens) {
  return ReserveDrafterBlocks(*kv_, id, tokens, &s.allocated, &s.table);
}

void DraftModel::Truncate(SeqId id, Seq& s, int64_t n) {
  if (n < static_cast<int64_t>(s.kv_tokens.size())) s.kv_tokens.resize(static_cast<size_t>(n));
  TruncateDrafterBlocks(*kv_, id, n, s.allocated, &s.table);
}

void DraftModel::Rollback(SeqId seq, std::span<const int32_t> tokens) {
  auto it = seqs_.find(seq);
  if (it == seqs_.end()) return;
  Seq& s = it->second;
  const size_t n = std::min(s.kv_tokens.size(), tokens.size());
  const size_t common = static_cast<size_t>(
      std::mismatch(s.kv_tokens.begin(), s.kv_tokens.begin() + static_cast<std::ptrdiff_t>(n), tokens.begin()).first -
      s.kv_tokens.begin());
  Truncate(seq, s, static_cast<int64_t>(common));
}

void DraftModel::Retain(std::span<const SeqId> live) { RetainDrafterSeqs(*kv_, seqs_, live); }

void DraftModel::Free(SeqId seq) { FreeDrafterSeq(*kv_, seqs_, seq); }

const float* DraftModel::DraftDistribution(SeqId seq, int i) const {
  auto it = seqs_.find(seq);
  if (it == seqs_.end() || i < 0 || i >= it->second.q_rows) return nullptr;
  return it->second.q.data() + static_cast<size_t>(i) * static_cast<size_t>(model_->config().n_vocab);
}

int32_t DraftModel::Pick(Seq& s, const DraftRequest& r, const float* logits, int j) {
  const int64_t V = model_->config().n_vocab;
  if (j == 0) s.q_rows = 0;
  if (!r.sampling || r.sampling->temperature < Sampler::kGreedyBelow)
    return static_cast<int32_t>(std::max_element(logits, logits + V) - logits);  // ties to the lowest id
  if (!s.sampler) {
    SamplingParams p = *r.sampling;  // the request's shaping of the distribution, without penalties
    p.presence_penalty = p.frequency_penalty = 0;
    p.repetition_penalty = 1;
    p.logprobs = false;
    p.top_logprobs = 0;
    s.sampler = std::make_unique<Sampler>(p);
  }
  s.sampler->Distribution(logits, V, &dist_);
  s.q.resize(static_cast<size_t>((j + 1) * V));
  float* q = s.q.data() + static_cast<size_t>(j * V);
  std::fill(q, q + V, 0.0f);
  for (const auto& [id, p] : dist_) q[id] = p;
  s.q_rows = j + 1;
  double u = std::uniform_real_distribution<double>(0.0, 1.0)(s.rng);
  for (const auto& [id, p] : dist_) {
    u -= p;
    if (u < 0) return id;
  }
  return dist_.back().first;
}

void DraftModel::Propose(std::span<DraftRequest> requests, ThreadPool& pool, int64_t catchup_budget) {
  const int64_t V = model_->config().n_vocab;
  kv_->Tick();
  for (DraftRequest& r : requests) {
    r.out->clear();
    r.out->reserve(static_cast<size_t>(std::max(r.want, 1)));  // batch entries point into it
    auto [it, fresh] = seqs_.try_emplace(r.id);
    if (fresh) it->second.rng.seed(r.seed);
    Rollback(r.id, r.context);
    // The last context token is always an input: its logits give d[0].
    const int64_t n = static_cast<int64_t>(r.context.size());
    if (static_cast<int64_t>(it->second.kv_tokens.size()) >= n) Truncate(r.id, it->second, n - 1);
  }
  auto behind = [&](size_t i) {
    return static_cast<int64_t>(requests[i].context.size()) -
           static_cast<int64_t>(seqs_[requests[i].id].kv_tokens.size());
  };
  CatchUpOrder(requests.size(), behind, &order_);
  batch_.clear();
  int64_t budget = catchup_budget;
  for (size_t i : order_) {
    DraftRequest& r = requests[i];
    Seq& s = seqs_[r.id];
    const int64_t m = static_cast<int64_t>(s.kv_tokens.size());
    const int64_t missing = static_cast<int64_t>(r.context.size()) - m;
    const int64_t chunk = std::min(missing, budget);
    if (chunk <= 0 || r.want <= 0) continue;
    const bool drafts = chunk == missing;
    if (!Reserve(r.id, s, m + chunk + (drafts ? r.want - 1 : 0))) {
      ++no_room_;
      continue;
    }
    budget -= chunk;
    batch_.Add(r.context.data() + m, chunk, m, s.table, drafts ? i : kNoRow);
    s.kv_tokens.insert(s.kv_tokens.end(), r.context.begin() + m, r.context.begin() + m + chunk);
  }
  DraftBatch& next = next_;
  for (int j = 0; !batch_.empty(); ++j) {
    const size_t n_logits = static_cast<size_t>(
        std::count_if(batch_.rows.begin(), batch_.rows.end(), [](size_t r) { return r != kNoRow; }));
    if (logits_.size() < n_logits * static_cast<size_t>(V)) logits_.resize(n_logits * static_cast<size_t>(V));
    const Status st = model_->Forward(batch_.seqs, pages_, pool, scratch_, logits_.data());
    if (!st.ok()) {  // a bug, not a client error: no drafts this step, and the draft K/V is redone
      PG_LOG_ERROR("draft model forward failed: {}", st.ToString());
      for (DraftRequest& r : requests) {
        r.out->clear();
        if (auto it = seqs_.find(r.id); it != seqs_.end()) Truncate(r.id, it->second, 0);
      }
      return;
    }
    next.clear();
    size_t li = 0;
    for (size_t e = 0; e < batch_.seqs.size(); ++e) {
      const size_t row = batch_.rows[e];
      if (row == kNoRow) continue;
      DraftRequest& r = requests[row];
      Seq& s = seqs_[r.id];
      const int32_t tok = Pick(s, r, &logits_[li++ * static_cast<size_t>(V)], j);
      r.out->push_back(tok);
      if (static_cast<int>(r.out->size()) >= r.want) continue;
      const int64_t pos = static_cast<int64_t>(s.kv_tokens.size());
      s.kv_tokens.push_back(tok);
      next.Add(&r.out->back(), 1, pos, s.table, row);
    }
    batch_.swap(next);
  }
}

}  // namespace pg
