// ExpertRouter (ExpertRouterParams, RouteToken): a Mixture-of-Experts layer's
// choice of experts for one token, and the weights their outputs are summed
// with (llama.cpp's build_moe_ffn). Not src/route's Router, which picks replicas:
//
//   probs    = softmax(logits)  or  sigmoid(logits)        (n_expert)
//   choice   = the k largest of probs + bias               (bias: glm4moe exp_probs_b,
//                                                           null = none; ties: lower id)
//              with expert groups (deepseek2), among the experts of the
//              n_group_used groups whose two largest probs + bias sum highest
//              (ties: lower group)
//   weight_j = probs[choice_j]                             (the bias never enters a weight)
//   if norm:   weight_j /= max(sum_j weight_j, 2^-14)
//   if scale not 0 or 1: weight_j *= scale
//
// The choices come out in descending order of probs + bias; that order is
// the order in which the experts' outputs are summed, so a token's result
// never depends on which other tokens share its batch.
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

#include "base/expert_groups.h"
#include "model/model_config.h"

namespace pg {

inline constexpr int64_t kMaxExpertGroups = kMaxRouterGroups;  // base/expert_groups.h

struct ExpertRouterParams {
  int64_t n_expert = 0;
  int64_t k = 0;  // experts per token, <= n_expert
  ExpertGating gating = ExpertGating::kSoftmax;
  bool norm_weights = false;
  float weights_scale = 0;  // 0 or 1: no scaling
  int64_t n_group = 1;      // <= kMaxExpertGroups; 1: no grouping
  int64_t n_group_used = 1;

  static ExpertRouterParams From(const MoeConfig& m) {
    return {m.n_expert, m.n_expert_used, m.gating, m.norm_weights, m.weights_scale, m.n_group, m.n_group_used};
  }
};

// Routes one token. logits: (n_expert) router outputs; bias: (n_expert) or
// null; probs: (n_expert) scratch, holds the gate probabilities on return;
// experts / weights: (k) outputs.
void RouteToken(const ExpertRouterParams& p, const float* logits, const float* bias, float* probs, int32_t* experts,
                float* weights);

}  // namespace pg
