// ExpertRouter: hand-computed routing for softmax and sigmoid gating, the
// selection bias (choice only, never a weight), renormalisation (with its
// clamp) and routed scaling.
#include "model/expert_router.h"

#include <gtest/gtest.h>

#include <cmath>
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

}  // namespace
}  // namespace pg
