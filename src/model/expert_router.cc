#include "model/expert_router.h"

#include <algorithm>
#include <cmath>

#include "backend/cpu/vec_ops.h"
#include "base/expert_groups.h"

namespace pg {
void RouteToken(const ExpertRouterParams& p, const float* logits, const float* bias, float* probs, int32_t* experts,
                float* weights) {
  const int64_t n = p.n_expert;
  if (p.gating == ExpertGating::kSoftmax) {
    std::copy(logits, logits + n, probs);
    SoftmaxInPlace(probs, n);
  } else {
    for (int64_t e = 0; e < n; ++e) probs[e] = 1.0f / (1.0f + std::exp(-logits[e]));
  }
  // Top k in one pass over the experts, by insertion into the chosen list
  // (experts[0..m), their scores in weights[0..m) until the end): the order is
  // score descending, NaN after every number, ties to the lower id. Experts
  // come in id order, so a later one goes before a chosen one only when it
  // scores strictly higher (or the chosen one's score is NaN and its is not).
  auto score = [&](int64_t e) { return bias ? probs[e] + bias[e] : probs[e]; };
  auto goes_before = [](float s, float chosen) { return s > chosen || (std::isnan(chosen) && !std::isnan(s)); };
  bool keep[kMaxExpertGroups];
  const bool grouped = p.n_group > 1;
  if (grouped) KeepExpertGroups(n, p.n_group, p.n_group_used, probs, bias, keep);
  const int64_t group_size = grouped ? n / p.n_group : n;
  int64_t m = 0;
  for (int64_t e = 0; e < n; ++e) {
    if (grouped && !keep[e / group_size]) continue;
    const float s = score(e);
    if (m == p.k && (m == 0 || !goes_before(s, weights[m - 1]))) continue;  // most: not in the top k
    int64_t i = m < p.k ? m++ : m - 1;                                      // the slot freed at the end of the list
    for (; i > 0 && goes_before(s, weights[i - 1]); --i) {
      experts[i] = experts[i - 1];
      weights[i] = weights[i - 1];
    }
    experts[i] = static_cast<int32_t>(e);
    weights[i] = s;
  }
  for (int64_t j = 0; j < p.k; ++j) weights[j] = probs[experts[j]];
  if (p.norm_weights) {
    float sum = 0;
    for (int64_t j = 0; j < p.k; ++j) sum += weights[j];
    sum = std::max(sum, 6.103515625e-5f);  // 2^-14, llama.cpp's clamp
    for (int64_t j = 0; j < p.k; ++j) weights[j] /= sum;
  }
  if (p.weights_scale != 0.0f && p.weights_scale != 1.0f)
    for (int64_t j = 0; j < p.k; ++j) weights[j] *= p.weights_scale;
}

}  // namespace pg
