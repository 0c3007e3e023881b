#include "model/expert_router.h"

#include <algorithm>
#include <cmath>

#include "backend/cpu/vec_ops.h"

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
  // Partial selection sort on the selection score: k is small (2..8) next to n.
  auto score = [&](int64_t e) { return bias ? probs[e] + bias[e] : probs[e]; };
  for (int64_t j = 0; j < p.k; ++j) {
    int64_t best = -1;
    float best_score = 0;
    for (int64_t e = 0; e < n; ++e) {
      bool taken = false;
      for (int64_t i = 0; i < j && !taken; ++i) taken = experts[i] == e;
      if (taken) continue;
      const float s = score(e);
      // NaN scores are never chosen over a number; ties keep the lower id.
      if (best < 0 || s > best_score || (std::isnan(best_score) && !std::isnan(s))) {
        best = e;
        best_score = s;
      }
    }
    experts[j] = static_cast<int32_t>(best);
    weights[j] = probs[best];
  }
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
