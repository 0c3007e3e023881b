#include "engine/sampler.h"

#include <algorithm>
#include <cmath>
#include <cstring>

namespace pg {
namespace {

// Largest first (a logit or a probability); ties to the lowest id.
bool ByLogit(const std::pair<float, int32_t>& a, const std::pair<float, int32_t>& b) {
  return a.first > b.first || (a.first == b.first && a.second < b.second);
}

// Distinct generated ids reserved for up front (past this, TokenCounts grows
// by doubling): a huge max_tokens does not reserve memory it may never use.
constexpr size_t kReservedGeneratedIds = 8192;

// Candidates sorted first when looking for the top-p nucleus (then x8).
constexpr size_t kNucleusFirstTry = 256;

}  // namespace

Sampler::Sampler(const SamplingParams& params, std::span<const int32_t> prompt) : params_(params) {
  if (params.has_seed)
    rng_.seed(params.seed);
  else
    rng_.seed((static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}());
  const bool repetition = params.repetition_penalty != 1.0f;
  penalised_ = repetition || params.frequency_penalty != 0.0f || params.presence_penalty != 0.0f;
  if (!penalised_) return;
  if (repetition)
    for (int32_t id : prompt) counts_.AddPrompt(id);
  // Built on the submitting thread: the engine thread's appends then find room.
  const size_t generated = std::min(static_cast<size_t>(std::max(params.max_tokens, 0)), kReservedGeneratedIds);
  counts_.Reserve(counts_.entries().size() + generated);
}

void Sampler::LogSoftmax(const float* logits, int64_t n, std::vector<float>* out) {
  out->resize(static_cast<size_t>(n));
  float mx = -INFINITY;
  for (int64_t i = 0; i < n; ++i) mx = std::max(mx, logits[i]);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) sum += std::exp(static_cast<double>(logits[i] - mx));
  const double lse = mx + std::log(sum);
  for (int64_t i = 0; i < n; ++i) (*out)[i] = static_cast<float>(logits[i] - lse);
}

int32_t Sampler::Sample(const float* logits, int64_t n, TokenEvent* event, ConstraintMatcher* constraint) {
  const TokenBitmask* allowed = constraint ? &constraint->Allowed() : nullptr;
  const float* x = Adjust(logits, n, allowed);
  int32_t chosen = Pick(x, n);
  // A draw lands on a zero-probability candidate only through rounding at the
  // end of the walk; under a mask that could be a forbidden token.
  if (allowed && !MaskHas(*allowed, chosen)) chosen = Argmax(x, n);
  if (constraint) constraint->Accept(chosen);
  ++generated_;
  if (penalised_) counts_.AddGenerated(chosen);
  if (event) Report(logits, n, chosen, event);
  return chosen;
}

void Sampler::Accept(const float* logits, int64_t n, int32_t token, TokenEvent* event) {
  ++generated_;
  if (penalised_) counts_.AddGenerated(token);
  if (event) Report(logits, n, token, event);
}

void Sampler::HoldBackUntilMinTokens(std::vector<int32_t> end_tokens) { held_back_ = std::move(end_tokens); }

void Sampler::HoldBack(float* x, int64_t n, const TokenBitmask* allowed) {
  bool other = !allowed;  // without a constraint, some non-end token is always left
  for (int64_t j = 0; j < n && !other; ++j)
    other = x[j] != -INFINITY && std::find(held_back_.begin(), held_back_.end(), j) == held_back_.end();
  if (!other) return;  // the constraint allows only end tokens: it decides
  for (int32_t id : held_back_)
    if (id >= 0 && id < n) x[id] = -INFINITY;
}

const float* Sampler::Adjust(const float* logits, int64_t n, const TokenBitmask* allowed) {
  if (params_.logit_bias.empty() && !penalised_ && !allowed && !holding_back()) return logits;
  adjusted_.resize(static_cast<size_t>(n));
  std::memcpy(adjusted_.data(), logits, static_cast<size_t>(n) * sizeof(float));
  float* x = adjusted_.data();
  if (allowed) {
    // Ids past the mask (a model's padded vocabulary) are never allowed.
    for (int64_t w = 0; w * 64 < n; ++w) {
      const uint64_t bits = static_cast<size_t>(w) < allowed->size() ? (*allowed)[static_cast<size_t>(w)] : 0;
      if (bits == ~uint64_t{0}) continue;
      const int64_t end = std::min<int64_t>(n, (w + 1) * 64);
      for (int64_t j = w * 64; j < end; ++j)
        if (!((bits >> (j & 63)) & 1u)) x[j] = -INFINITY;
    }
  }
  if (holding_back()) HoldBack(x, n, allowed);
  for (const auto& [id, bias] : params_.logit_bias)
    if (id >= 0 && id < n) x[id] += bias;  // ids were checked against the vocabulary by the server
  const float rep = params_.repetition_penalty;
  for (const TokenCounts::Entry& e : counts_.entries()) {
    if (e.id < 0 || e.id >= n) continue;
    float& v = x[e.id];
    if (rep != 1.0f) v = v > 0 ? v / rep : v * rep;
    if (e.generated > 0) v -= params_.frequency_penalty * static_cast<float>(e.generated) + params_.presence_penalty;
  }
  return x;
}

int32_t Sampler::Argmax(const float* x, int64_t n) {
  int32_t best = 0;
  for (int64_t i = 1; i < n; ++i)
    if (x[i] > x[best]) best = static_cast<int32_t>(i);
  return best;
}

int32_t Sampler::Pick(const float* x, int64_t n) {
  if (params_.temperature < kGreedyBelow) return Argmax(x, n);
  const size_t keep = Candidates(x, n);
  double total = 0;
  for (size_t i = 0; i < keep; ++i) total += cand_[i].first;
  double r = std::uniform_real_distribution<double>(0.0, total)(rng_);
  for (size_t i = 0; i < keep; ++i) {
    r -= cand_[i].first;
    if (r < 0) return cand_[i].second;
  }
  return cand_[keep - 1].second;
}

void Sampler::Distribution(const float* logits, int64_t n, std::vector<std::pair<int32_t, float>>* out,
                           ConstraintMatcher* constraint) {
  const float* x = Adjust(logits, n, constraint ? &constraint->Allowed() : nullptr);
  out->clear();
  if (params_.temperature < kGreedyBelow) {
    out->emplace_back(Argmax(x, n), 1.0f);
    return;
  }
  const size_t keep = Candidates(x, n);
  double total = 0;
  for (size_t i = 0; i < keep; ++i) total += cand_[i].first;
  for (size_t i = 0; i < keep; ++i) out->emplace_back(cand_[i].second, static_cast<float>(cand_[i].first / total));
}

size_t Sampler::Candidates(const float* x, int64_t n) {
  cand_.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) cand_[i] = {x[i] / params_.temperature, static_cast<int32_t>(i)};
  size_t keep = cand_.size();
  bool sorted = false;
  if (params_.top_k > 0 && static_cast<size_t>(params_.top_k) < keep) {
    keep = static_cast<size_t>(params_.top_k);
    std::partial_sort(cand_.begin(), cand_.begin() + static_cast<std::ptrdiff_t>(keep), cand_.end(), ByLogit);
    sorted = true;
  }
  return Filter(keep, sorted);
}

size_t Sampler::Filter(size_t keep, bool sorted) {
  float mx = -INFINITY;
  for (size_t i = 0; i < keep; ++i) mx = std::max(mx, cand_[i].first);
  double sum = 0;
  for (size_t i = 0; i < keep; ++i) {
    cand_[i].first = static_cast<float>(std::exp(static_cast<double>(cand_[i].first - mx)));
    sum += cand_[i].first;
  }
  for (size_t i = 0; i < keep; ++i) cand_[i].first = static_cast<float>(cand_[i].first / sum);
  if (params_.top_p < 1.0f) {
    keep = TopP(keep, sorted);
    sorted = true;
  }
  if (params_.min_p > 0.0f) {
    const float floor = static_cast<float>(1.0 / sum) * params_.min_p;  // the largest has exp(0) / sum
    auto low = [floor](const std::pair<float, int32_t>& c) { return c.first < floor; };
    auto end = cand_.begin() + static_cast<std::ptrdiff_t>(keep);
    auto kept_end = sorted ? std::find_if(cand_.begin(), end, low) : std::remove_if(cand_.begin(), end, low);
    keep = std::max<size_t>(1, static_cast<size_t>(kept_end - cand_.begin()));
  }
  return keep;
}

size_t Sampler::TopP(size_t keep, bool sorted) {
  // Unsorted: sort a prefix that grows until it holds the nucleus (usually
  // small), instead of the whole vocabulary.
  size_t k = sorted ? keep : std::min(keep, kNucleusFirstTry);
  for (;;) {
    const auto begin = cand_.begin();
    const auto end = begin + static_cast<std::ptrdiff_t>(keep);
    if (!sorted) std::partial_sort(begin, begin + static_cast<std::ptrdiff_t>(k), end, ByLogit);
    double acc = 0;
    for (size_t i = 0; i < k; ++i)
      if ((acc += cand_[i].first) >= params_.top_p) return i + 1;
    if (k == keep) return keep;
    k = std::min(keep, k * 8);
  }
}

void Sampler::Report(const float* logits, int64_t n, int32_t chosen, TokenEvent* event) {
  event->token = chosen;
  event->top.clear();
  if (!params_.logprobs && params_.top_logprobs <= 0) return;
  LogSoftmax(logits, n, &logprobs_);
  event->logprob = logprobs_[static_cast<size_t>(chosen)];
  const int k = static_cast<int>(std::min<int64_t>(params_.top_logprobs, n));
  if (k <= 0) return;
  cand_.resize(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) cand_[i] = {logprobs_[i], static_cast<int32_t>(i)};
  std::partial_sort(cand_.begin(), cand_.begin() + k, cand_.end(), ByLogit);
  for (int i = 0; i < k; ++i) event->top.emplace_back(cand_[i].second, cand_[i].first);
}

}  // namespace pg
