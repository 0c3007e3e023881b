#include "bench_spec.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "base/clock.h"
#include "spec/speculator.h"

namespace pg {
namespace {

int32_t Argmax(const float* x, int64_t n) {
  return static_cast<int32_t>(std::max_element(x, x + n) - x);  // ties to the lowest id
}

}  // namespace

SpecDecodeResult RunSpecDecode(const Model& m, ThreadPool& pool, const SpecConfig& spec, int n_gen,
                               int32_t first_token, uint64_t seed, DraftModel* draft_model) {
  SpecDecodeResult r;
  auto speculator = Speculator::Create(spec);
  if (!speculator.ok()) return r;
  Speculator& sp = **speculator;
  std::unique_ptr<SpecSequence> seq = sp.NewSequence(seed);
  const ModelConfig& c = m.config();
  const int64_t V = c.n_vocab, page = 16;
  const int64_t positions = n_gen + spec.draft_max + 2;
  KvPages pages;
  pages.layout = KvLayout{static_cast<int>(c.n_layer), static_cast<int>(c.n_head_kv), static_cast<int>(c.head_dim),
                          static_cast<int>(page), KvDtype::kF16};
  pages.block_bytes = pages.layout.block_bytes();
  const int64_t n_blocks = (positions + page - 1) / page;
  std::vector<uint8_t> mem(pages.block_bytes * static_cast<size_t>(n_blocks));
  pages.base = mem.data();
  std::vector<int32_t> table(static_cast<size_t>(n_blocks));
  std::iota(table.begin(), table.end(), 0);
  ForwardScratch scratch;
  std::vector<float> logits(static_cast<size_t>(V * (spec.draft_max + 1)));

  std::vector<int32_t> context = {first_token}, draft, inputs, model_draft, draft_tokens;
  constexpr SeqId kDraftSeq = 1;
  std::vector<BatchSeq> batch;
  BatchSeq b0{context.data(), 1, 0, table.data(), n_blocks, true};
  if (!m.Forward({&b0, 1}, pages, pool, scratch, logits.data()).ok()) return r;
  context.push_back(Argmax(logits.data(), V));
  int64_t generated = 1, computed = 1;  // K/V of [0, computed) are in the pages
  const double t0 = NowSeconds();
  const int64_t total = int64_t{n_gen} + 1;  // n_gen decoded after the prompt's token, as bench-model's tg
  while (generated < total) {
    sp.Propose(*seq, context, static_cast<int>(total - generated - 1), &draft);
    if (seq->model_want > 0) {  // --spec draft: the draft model's greedy k steps
      model_draft.clear();
      if (draft_model) {
        DraftRequest req{kDraftSeq, context, seq->model_want, nullptr, seed, &model_draft};
        draft_model->Propose({&req, 1}, pool, int64_t{1} << 20);
      }
      sp.ProposeWithModel(*seq, context, model_draft, &draft_tokens);
      draft.swap(draft_tokens);
    }
    inputs.assign(1, context.back());
    inputs.insert(inputs.end(), draft.begin(), draft.end());
    batch.clear();
    for (size_t i = 0; i < inputs.size(); ++i)
      batch.push_back(BatchSeq{&inputs[i], 1, computed + static_cast<int64_t>(i), table.data(), n_blocks, true});
    if (!m.Forward(batch, pages, pool, scratch, logits.data()).ok()) return r;
    const int k = static_cast<int>(draft.size());
    const int synthetic = spec.synthetic() ? sp.SyntheticAccepted(*seq, k) : -1;
    int accepted = 0;
    for (int i = 0; i <= k && generated < total; ++i) {
      const int32_t tok = i < synthetic ? draft[static_cast<size_t>(i)] : Argmax(&logits[static_cast<size_t>(i * V)], V);
      context.push_back(tok);
      ++generated;
      ++computed;
      const bool match = i < k && (synthetic >= 0 ? i < synthetic : tok == draft[static_cast<size_t>(i)]);
      if (!match) break;
      ++accepted;
    }
    if (draft_model) draft_model->Rollback(kDraftSeq, context);
    sp.Record(*seq, k, accepted);
    if (k > 0) {
      ++r.steps;
      r.drafted += k;
      r.accepted += accepted;
    }
  }
  r.tokens_per_s = static_cast<double>(n_gen) / (NowSeconds() - t0);
  if (draft_model) draft_model->Retain({});  // frees the draft's KV for the next repetition
  return r;
}

}  // namespace pg
