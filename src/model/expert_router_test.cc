// ExpertRouter: hand-computed routing for softmax and sigmoid gating, the
// selection bias (choice only, never a weight), renormalisation (with its
// clamp) and routed scaling.
#include "model/expert_router.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace pg {
namespace {

struct Routed {
  std::vector<int32_t> experts;
  std::vector<float> weights;
};

Routed Route(const ExpertRouterParams& p, const std::vector<float>& logits, const float* bias = nullptr) {
  std::vector<float> probs(static_cast<size_t>(p.n_expert));
  Routed r{std::vector<int32_t>(static_cast<size_t>(p.k)), std::vector<float>(static_cast<size_t>(p.k))};
  RouteToken(p, logits.data(), bias, probs.data(), r.experts.data(), r.weights.data());
  return r;
}

double Sigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

TEST(ExpertRouter, SoftmaxTopKInDescendingOrderWithGateProbabilities) {
  // softmax of {1, 3, 2, 0}: e^x / (e^0 + e^1 + e^2 + e^3).
  const std::vector<float> logits = {1, 3, 2, 0};
  const double z = 1 + std::exp(1.0) + std::exp(2.0) + std::exp(3.0);
  const ExpertRouterParams p{4, 2, ExpertGating::kSoftmax, false, 0};
  const Routed r = Route(p, logits);
  EXPECT_EQ(r.experts, (std::vector<int32_t>{1, 2}));
  EXPECT_NEAR(r.weights[0], std::exp(3.0) / z, 1e-6);
  EXPECT_NEAR(r.weights[1], std::exp(2.0) / z, 1e-6);
}

TEST(ExpertRouter, NormalisedWeightsSumToOneAndScaleMultiplies) {
  const std::vector<float> logits = {1, 3, 2, 0};
  ExpertRouterParams p{4, 2, ExpertGating::kSoftmax, true, 0};
  Routed r = Route(p, logits);
  // e^3 / (e^3 + e^2) and e^2 / (e^3 + e^2): the softmax over the chosen logits.
  EXPECT_NEAR(r.weights[0], 1.0 / (1.0 + std::exp(-1.0)), 1e-6);
  EXPECT_NEAR(r.weights[1], 1.0 / (1.0 + std::exp(1.0)), 1e-6);
  p.weights_scale = 2.5f;
  r = Route(p, logits);
  EXPECT_NEAR(r.weights[0], 2.5 / (1.0 + std::exp(-1.0)), 1e-6);
  EXPECT_NEAR(r.weights[0] + r.weights[1], 2.5, 1e-6);
  p.weights_scale = 1.0f;  // 1 (like 0) means no scaling
  r = Route(p, logits);
  EXPECT_NEAR(r.weights[0] + r.weights[1], 1.0, 1e-6);
}

TEST(ExpertRouter, SigmoidBiasChoosesButDoesNotWeigh) {
  // Without the bias experts 0 and 1 win; the bias lifts 3 over 1.
  const std::vector<float> logits = {2.0f, 1.0f, -1.0f, 0.5f};
  const std::vector<float> bias = {0.0f, 0.0f, 0.1f, 0.3f};
  const ExpertRouterParams p{4, 2, ExpertGating::kSigmoid, false, 0};
  Routed r = Route(p, logits);
  EXPECT_EQ(r.experts, (std::vector<int32_t>{0, 1}));
  EXPECT_NEAR(r.weights[1], Sigmoid(1.0), 1e-6);
  r = Route(p, logits, bias.data());
  // Scores: 0.881, 0.731, 0.369, 0.922: expert 3 first, then 0.
  EXPECT_EQ(r.experts, (std::vector<int32_t>{3, 0}));
  EXPECT_NEAR(r.weights[0], Sigmoid(0.5), 1e-6);  // unbiased probability
  EXPECT_NEAR(r.weights[1], Sigmoid(2.0), 1e-6);
}

TEST(ExpertRouter, SigmoidNormalisedAndScaledAsGlm) {
  const std::vector<float> logits = {2.0f, 1.0f, -1.0f, 0.5f};
  const std::vector<float> bias = {0.0f, 0.0f, 0.1f, 0.3f};
  const ExpertRouterParams p{4, 2, ExpertGating::kSigmoid, true, 2.5f};
  const Routed r = Route(p, logits, bias.data());
  const double a = Sigmoid(0.5), b = Sigmoid(2.0);
  EXPECT_NEAR(r.weights[0], 2.5 * a / (a + b), 1e-6);
  EXPECT_NEAR(r.weights[1], 2.5 * b / (a + b), 1e-6);
}

TEST(ExpertRouter, NormalisationClampsATinySum) {
  // Sigmoid of -30 is ~9.4e-14: the sum is clamped at 2^-14, not divided by.
  const std::vector<float> logits = {-30.0f, -31.0f, -40.0f};
  const ExpertRouterParams p{3, 2, ExpertGating::kSigmoid, true, 0};
  const Routed r = Route(p, logits);
  EXPECT_EQ(r.experts, (std::vector<int32_t>{0, 1}));
  EXPECT_NEAR(r.weights[0], Sigmoid(-30.0) / 6.103515625e-5, 1e-15);
}

TEST(ExpertRouter, TiesGoToTheLowerIdAndAllExpertsCanBeChosen) {
  const std::vector<float> logits = {0.5f, 0.5f, 0.5f};
  const ExpertRouterParams p{3, 3, ExpertGating::kSoftmax, true, 0};
  const Routed r = Route(p, logits);
  EXPECT_EQ(r.experts, (std::vector<int32_t>{0, 1, 2}));
  for (float w : r.weights) EXPECT_NEAR(w, 1.0 / 3, 1e-6);
}

TEST(ExpertRouter, NanLogitsAreNeverPreferred) {
  const std::vector<float> logits = {NAN, 1.0f, 2.0f};
  const ExpertRouterParams p{3, 2, ExpertGating::kSigmoid, false, 0};
  const Routed r = Route(p, logits);
  EXPECT_EQ(r.experts, (std::vector<int32_t>{2, 1}));
}

// The selection as first written (a partial selection sort, O(k^2 n)): the
// one-pass top k must choose the same experts in the same order.
void ReferenceChoice(int64_t n, int64_t k, const float* probs, const float* bias, int32_t* experts) {
  auto score = [&](int64_t e) { return bias ? probs[e] + bias[e] : probs[e]; };
  for (int64_t j = 0; j < k; ++j) {
    int64_t best = -1;
    float best_score = 0;
    for (int64_t e = 0; e < n; ++e) {
      bool taken = false;
      for (int64_t i = 0; i < j && !taken; ++i) taken = experts[i] == e;
      if (taken) continue;
      const float s = score(e);
      if (best < 0 || s > best_score || (std::isnan(best_score) && !std::isnan(s))) {
        best = e;
        best_score = s;
      }
    }
    experts[j] = static_cast<int32_t>(best);
  }
}

TEST(ExpertRouter, OnePassTopKChoosesAsTheSelectionSort) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 3000; ++trial) {
    const int64_t n = 1 + static_cast<int64_t>(rng() % 160), k = 1 + static_cast<int64_t>(rng() % n);
    const ExpertRouterParams p{n, k, trial % 2 ? ExpertGating::kSigmoid : ExpertGating::kSoftmax, false, 0};
    std::vector<float> logits(static_cast<size_t>(n)), bias(static_cast<size_t>(n));
    const int levels = 1 + static_cast<int>(rng() % 6);  // few levels: many ties
    for (int64_t e = 0; e < n; ++e) {
      const uint32_t r = rng() % 100;
      logits[e] = r < 3 ? NAN : r < 6 ? (r % 2 ? 0.0f : -0.0f) : static_cast<float>(rng() % levels) - 2.0f;
      bias[e] = static_cast<float>(rng() % 3) * 0.25f;
    }
    const bool with_bias = trial % 3 == 0;
    const Routed r = Route(p, logits, with_bias ? bias.data() : nullptr);
    std::vector<float> probs(static_cast<size_t>(n));
    std::vector<int32_t> want(static_cast<size_t>(k));
    std::vector<float> w(static_cast<size_t>(k));
    RouteToken(p, logits.data(), nullptr, probs.data(), want.data(), w.data());  // probs only
    ReferenceChoice(n, k, probs.data(), with_bias ? bias.data() : nullptr, want.data());
    ASSERT_EQ(r.experts, want) << "trial " << trial << " n " << n << " k " << k;
    for (int64_t j = 0; j < k; ++j) {
      const float pw = probs[static_cast<size_t>(want[j])];
      if (!std::isnan(pw)) {
        ASSERT_EQ(r.weights[j], pw) << trial;
      }
    }
  }
}

// Group-limited routing (DeepSeek-V3): 8 experts in 4 groups of 2; the 2
// groups whose two scores (prob + bias) sum highest compete, so expert 0,
// the single best, loses to weaker experts of stronger groups.
TEST(ExpertRouter, ExpertGroupsKeepTheGroupsWithTheLargestTopTwoSums) {
  ExpertRouterParams p{8, 2, ExpertGating::kSigmoid, false, 0, 4, 2};
  //                    group 0      group 1      group 2      group 3
  const std::vector<float> logits = {4.0f, -4.0f, 1.0f, 1.5f, 2.0f, 0.5f, -1.0f, -1.0f};
  Routed r = Route(p, logits);
  EXPECT_EQ(r.experts, (std::vector<int32_t>{4, 3}));  // groups 1 (sum 1.55) and 2 (1.50) beat group 0 (1.00)
  EXPECT_FLOAT_EQ(r.weights[0], static_cast<float>(Sigmoid(2.0)));
  // The bias enters the group scores too: lifting expert 1 makes group 0 a kept group.
  const std::vector<float> bias = {0, 0.9f, 0, 0, 0, 0, 0, 0};
  r = Route(p, logits, bias.data());
  EXPECT_EQ(r.experts, (std::vector<int32_t>{0, 1}));  // groups 0 (1.90) and 1 kept; expert 1 scores 0.92
  // One group kept of four: only its two experts can be chosen.
  p.n_group_used = 1;
  r = Route(p, logits);
  EXPECT_EQ(r.experts, (std::vector<int32_t>{3, 2}));
}

}  // namespace
}  // namespace pg
