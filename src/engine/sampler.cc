#include "engine/sampler.h"

#include <algorithm>
#include <cmath>

namespace pg {

Sampler::Sampler(const SamplingParams& params) : params_(params) {
  if (params.has_seed) rng_.seed(params.seed);
  else rng_.seed((static_cast<uint64_t>(std::random_device{}()) << 32) ^ std::random_device{}());
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

int32_t Sampler::Sample(const float* logits, int64_t n, TokenEvent* event) {
  int32_t chosen = 0;
  if (params_.temperature <= 0.0f) {
    for (int64_t i = 1; i < n; ++i)
      if (logits[i] > logits[chosen]) chosen = static_cast<int32_t>(i);
  } else {
    cand_.resize(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) cand_[i] = {logits[i] / params_.temperature, static_cast<int32_t>(i)};
    auto by_logit = [](const auto& a, const auto& b) { return a.first > b.first || (a.first == b.first && a.second < b.second); };
    size_t keep = cand_.size();
    if (params_.top_k > 0 && static_cast<size_t>(params_.top_k) < keep) {
      keep = static_cast<size_t>(params_.top_k);
      std::partial_sort(cand_.begin(), cand_.begin() + keep, cand_.end(), by_logit);
    } else {
      std::sort(cand_.begin(), cand_.end(), by_logit);
    }
    // Softmax over the kept candidates (sorted, most likely first).
    const float mx = cand_[0].first;
    double sum = 0;
    for (size_t i = 0; i < keep; ++i) {
      cand_[i].first = static_cast<float>(std::exp(static_cast<double>(cand_[i].first - mx)));
      sum += cand_[i].first;
    }
    for (size_t i = 0; i < keep; ++i) cand_[i].first = static_cast<float>(cand_[i].first / sum);
    if (params_.top_p < 1.0f) {
      double acc = 0;
      size_t i = 0;
      for (; i < keep; ++i) {
        acc += cand_[i].first;
        if (acc >= params_.top_p) {
          ++i;
          break;
        }
      }
      keep = std::max<size_t>(1, std::min(keep, i));
    }
    if (params_.min_p > 0.0f) {
      const float floor = cand_[0].first * params_.min_p;
      size_t i = 1;
      while (i < keep && cand_[i].first >= floor) ++i;
      keep = i;
    }
    double total = 0;
    for (size_t i = 0; i < keep; ++i) total += cand_[i].first;
    double r = std::uniform_real_distribution<double>(0.0, total)(rng_);
    chosen = cand_[keep - 1].second;
    for (size_t i = 0; i < keep; ++i) {
      r -= cand_[i].first;
      if (r < 0) {
        chosen = cand_[i].second;
        break;
      }
    }
  }
  if (event) {
    event->token = chosen;
    event->top.clear();
    if (params_.logprobs || params_.top_logprobs > 0) {
      LogSoftmax(logits, n, &logprobs_);
      event->logprob = logprobs_[chosen];
      int k = std::min<int64_t>(params_.top_logprobs, n);
      if (k > 0) {
        cand_.resize(static_cast<size_t>(n));
        for (int64_t i = 0; i < n; ++i) cand_[i] = {logprobs_[i], static_cast<int32_t>(i)};
        std::partial_sort(cand_.begin(), cand_.begin() + k, cand_.end(), [](const auto& a, const auto& b) {
          return a.first > b.first || (a.first == b.first && a.second < b.second);
        });
        for (int i = 0; i < k; ++i) event->top.emplace_back(cand_[i].second, cand_[i].first);
      }
    }
  }
  return chosen;
}

}  // namespace pg
