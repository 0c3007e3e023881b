#include "spec/speculator.h"

#include <algorithm>

namespace pg {

Result<std::unique_ptr<Speculator>> Speculator::Create(SpecConfig config) {
  PG_RETURN_IF_ERROR(ValidateSpecConfig(config));
  std::unique_ptr<Speculator> s(new Speculator(std::move(config)));
  for (size_t i = 0; i < s->config_.drafters.size(); ++i)
    if (s->config_.drafters[i] == DrafterKind::kDraft || s->config_.drafters[i] == DrafterKind::kMtp)
      s->model_drafter_ = static_cast<int>(i);
  if (s->config_.synthetic()) {
    PG_ASSIGN_OR_RETURN(s->synthetic_p_, SolveConditionalAcceptance(s->config_.synthetic_length, s->config_.draft_max));
  }
  s->uses_suffix_ = std::find(s->config_.drafters.begin(), s->config_.drafters.end(), DrafterKind::kSuffix) !=
                    s->config_.drafters.end();
  return s;
}

std::unique_ptr<SpecSequence> Speculator::NewSequence(uint64_t seed) const {
  auto s = std::make_unique<SpecSequence>(config_.draft_max);
  s->rng.seed(seed ^ 0x9e3779b97f4a7c15ull);
  if (config_.synthetic()) s->synthetic = std::make_unique<SyntheticAcceptance>(synthetic_p_, seed);
  return s;
}

void Speculator::Propose(SpecSequence& s, std::span<const int32_t> context, int limit, std::vector<int32_t>* draft) {
  draft->clear();
  s.drafter = -1;
  s.model_want = 0;
  if (limit <= 0 || context.empty()) return;
  const int want = config_.synthetic() ? std::min(limit, config_.draft_max) : std::min(limit, s.length.next());
  RunChain(s, context, want, 0, draft);
  if (s.model_want == 0) Finalize(s, context, want, draft);
}

void Speculator::ProposeWithModel(SpecSequence& s, std::span<const int32_t> context,
                                  std::span<const int32_t> model_draft, std::vector<int32_t>* draft) {
  const int want = s.model_want;
  s.model_want = 0;
  draft->clear();
  if (want <= 0) return;
  if (!model_draft.empty()) {
    draft->assign(model_draft.begin(), model_draft.begin() + std::min<ptrdiff_t>(want, std::ssize(model_draft)));
    s.drafter = model_drafter_;
  } else {
    RunChain(s, context, want, static_cast<size_t>(model_drafter_) + 1, draft);
  }
  Finalize(s, context, want, draft);
}

void Speculator::RunChain(SpecSequence& s, std::span<const int32_t> context, int want, size_t from,
                          std::vector<int32_t>* draft) {
  for (size_t i = from; i < config_.drafters.size() && draft->empty(); ++i) {
    switch (config_.drafters[i]) {
      case DrafterKind::kNgram:
        s.ngram.Extend(context);
        s.ngram.Propose(context, want, draft);
        break;
      case DrafterKind::kSuffix: suffix_.Propose(context, want, draft); break;
      case DrafterKind::kDraft:
      case DrafterKind::kMtp:
        s.model_want = want;  // the engine runs the draft model (or MTP layer), then ProposeWithModel
        return;
    }
    if (!draft->empty()) s.drafter = static_cast<int>(i);
  }
}

void Speculator::Finalize(SpecSequence& s, std::span<const int32_t> context, int want,
                          std::vector<int32_t>* draft) const {
  if (config_.synthetic()) {
    if (s.drafter < 0) s.drafter = 0;
    while (static_cast<int>(draft->size()) < want) draft->push_back(draft->empty() ? context.back() : draft->back());
  }
}

int Speculator::SyntheticAccepted(SpecSequence& s, int drafted) {
  return s.synthetic ? s.synthetic->Accepted(drafted) : 0;
}

void Speculator::Record(SpecSequence& s, int drafted, int accepted) {
  if (s.drafter < 0 || drafted <= 0) return;
  DrafterStats& st = stats_[static_cast<size_t>(s.drafter)];
  st.steps++;
  st.drafted += drafted;
  st.accepted += accepted;
  s.length.Record(drafted, accepted);
  s.acceptance.Record(drafted, accepted);
  acceptance_[static_cast<size_t>(s.drafter)].Record(drafted, accepted);
  s.drafter = -1;
}

double Speculator::ExpectedAcceptance(const SpecSequence& s) const {
  if (config_.synthetic()) return synthetic_p_;
  // The drafter's own rate (an even prior before it has tried anything),
  // worth 8 positions against the sequence's count.
  // Before a proposal (no drafter yet): the best drafter's.
  double drafter = 0;
  if (s.drafter >= 0)
    drafter = acceptance_[static_cast<size_t>(s.drafter)].p(0.5, 2);
  else
    for (const AcceptanceEstimate& a : acceptance_) drafter = std::max(drafter, a.p(0.5, 2));
  return s.acceptance.p(drafter, 8);
}

void Speculator::Finished(std::span<const int32_t> tokens, int64_t seen) {
  if (!uses_suffix_) return;
  // A suffix starting before seen - (depth - 1) lies wholly in the seen part.
  const int64_t first = std::clamp<int64_t>(seen - (suffix_.depth() - 1), 0, static_cast<int64_t>(tokens.size()));
  suffix_.Insert(tokens.subspan(static_cast<size_t>(first)));
}

}  // namespace pg
