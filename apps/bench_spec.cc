#include "bench_spec.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "base/clock.h"
#include "engine/cpu_executor.h"
#include "engine/scheduler.h"
#include "engine/sequence.h"
#include "tokenizer/tokenizer.h"

namespace pg {
namespace {

constexpr int64_t kPage = 16;

// Positions one repetition may write: the prompt token, n_gen, a last draft.
int64_t Positions(int n_gen, const SpecConfig& spec) { return n_gen + spec.draft_max + 2; }

}  // namespace

Result<std::unique_ptr<SpeculativeDecoder>> CreateBenchDecoder(const Model& m, const std::string& model_path,
                                                               const ModelOptions& options, const SpecConfig& spec,
                                                               int n_gen) {
  const int64_t positions = Positions(n_gen, spec);
  SpecLimits limits;
  limits.ctx_size = positions + 1;
  limits.max_seq_tokens = (positions + kPage - 1) / kPage * kPage;
  limits.catchup_budget = int64_t{1} << 20;
  PG_ASSIGN_OR_RETURN(std::unique_ptr<SpeculativeDecoder> d, SpeculativeDecoder::Create(spec, limits));
  if (std::find(spec.drafters.begin(), spec.drafters.end(), DrafterKind::kMtp) != spec.drafters.end()) {
    PG_RETURN_IF_ERROR(d->EnableMtp(m));
    const KvLayout ml = d->MtpLayout(static_cast<int>(kPage), KvDtype::kF16);
    PG_RETURN_IF_ERROR(d->CreateMtpKv(ml.block_bytes() * static_cast<uint64_t>(positions / kPage + 2),
                                      static_cast<int>(kPage), KvDtype::kF16));
  }
  if (spec.draft_model.empty()) return d;
  PG_ASSIGN_OR_RETURN(std::unique_ptr<Tokenizer> tok, m.source().LoadTokenizer());
  PG_RETURN_IF_ERROR(d->LoadDraftModel(spec.draft_model, options, model_path, m, *tok));
  const KvLayout dl = d->DraftLayout(static_cast<int>(kPage), KvDtype::kF16);
  const uint64_t bytes = dl.block_bytes() * static_cast<uint64_t>(positions / kPage + 2);
  PG_RETURN_IF_ERROR(d->CreateDraftKv(bytes, static_cast<int>(kPage), KvDtype::kF16));
  return d;
}

SpecDecodeResult RunSpecDecode(const Model& m, ThreadPool& pool, SpeculativeDecoder& decoder, int n_gen,
                               int32_t first_token, uint64_t seed) {
  SpecDecodeResult r;
  if (!decoder.Reset().ok()) return r;
  const ModelConfig& c = m.config();
  const int64_t n_blocks = (Positions(n_gen, decoder.config()) + kPage - 1) / kPage;
  KvPages pages;
  pages.layout = c.KvLayoutFor(kPage, KvDtype::kF16);
  pages.block_bytes = pages.layout.block_bytes();
  std::vector<uint8_t> mem(pages.block_bytes * static_cast<size_t>(n_blocks));
  pages.base = mem.data();
  CpuExecutor executor(m, pool);
  if (!executor.Prepare(pages).ok()) return r;

  const int64_t total = int64_t{n_gen} + 1;  // n_gen decoded after the prompt's token, as bench-model's tg
  std::vector<std::unique_ptr<Sequence>> running;
  running.push_back(std::make_unique<Sequence>());
  Sequence& s = *running.back();
  s.id = 1;
  s.request.sampling.temperature = 0;  // greedy
  s.request.sampling.max_tokens = static_cast<int>(total);
  s.sampler = std::make_unique<Sampler>(s.request.sampling);
  s.spec = decoder.NewSequence(seed);
  s.tokens = {first_token};
  s.block_table.resize(static_cast<size_t>(n_blocks));
  std::iota(s.block_table.begin(), s.block_table.end(), 0);
  auto emit = [&](Sequence* q, int32_t token, ServiceEvent&) {
    q->tokens.push_back(token);
    return ++q->n_generated >= total;
  };
  StepCostModel cost;  // fitted to this run's steps, as the engine's is to serve's
  StepPlan plan;
  plan.batch = {&s};
  ServiceEvent ev;
  double t0 = 0;
  while (s.n_generated < total) {
    if (s.n_generated == 1) t0 = NowSeconds();  // the prompt's step is not timed
    decoder.Propose(running, 0, pool, cost);
    s.step_tokens = 1 + static_cast<int64_t>(s.draft.size());
    plan.n_tokens = s.step_tokens;
    decoder.Plan(&plan, cost, nullptr);
    BatchSeq b{s.tokens.data() + s.n_computed, s.step_tokens, s.n_computed, s.block_table.data(), n_blocks, true};
    const bool verify = !s.draft.empty();
    if (verify) decoder.Verify(&s, &b);
    const double start = NowSeconds();
    Result<LogitsRows> rows = executor.Forward({&b, 1});
    if (!rows.ok()) return r;
    Sequence* seqs[] = {&s};
    decoder.Observe(seqs, {&b, 1}, rows->hidden);
    cost.Observe(ShapeOf({&b, 1}), NowSeconds() - start);
    if (verify) {
      s.n_computed += decoder.Accept(&s, rows->data, rows->n_vocab, emit);
    } else {
      s.n_computed += s.step_tokens;
      emit(&s, s.sampler->Sample(rows->data, rows->n_vocab, &ev.token), ev);
    }
  }
  r.tokens_per_s = static_cast<double>(n_gen) / (NowSeconds() - t0);
  r.steps = s.spec_usage.steps;
  r.drafted = s.spec_usage.drafted;
  r.accepted = s.spec_usage.accepted;
  decoder.Finished(s);  // frees the draft's KV
  return r;
}

}  // namespace pg
