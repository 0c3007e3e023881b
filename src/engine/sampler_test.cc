#include "engine/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>

namespace pg {
namespace {

TEST(Sampler, GreedyPicksArgmaxAndReportsFullSoftmax) {
  SamplingParams p;
  p.temperature = 0;
  p.top_logprobs = 2;
  Sampler s(p);
  float logits[4] = {0.5f, 2.0f, 1.0f, 2.0f};
  TokenEvent ev;
  EXPECT_EQ(s.Sample(logits, 4, &ev), 1);  // tie -> lowest id
  double z = std::exp(0.5) + 2 * std::exp(2.0) + std::exp(1.0);
  EXPECT_NEAR(ev.logprob, 2.0 - std::log(z), 1e-6);
  ASSERT_EQ(ev.top.size(), 2u);
  EXPECT_EQ(ev.top[0].first, 1);
  EXPECT_EQ(ev.top[1].first, 3);
}

TEST(Sampler, SeededSamplingIsDeterministicAndFollowsDistribution) {
  SamplingParams p;
  p.temperature = 1.0f;
  p.has_seed = true;
  p.seed = 42;
  float logits[3] = {0.0f, std::log(3.0f), -100.0f};
  Sampler a(p), b(p);
  std::map<int, int> counts;
  for (int i = 0; i < 4000; ++i) {
    int x = a.Sample(logits, 3, nullptr);
    EXPECT_EQ(x, b.Sample(logits, 3, nullptr));
    counts[x]++;
  }
  EXPECT_EQ(counts[2], 0);
  EXPECT_NEAR(counts[1] / 4000.0, 0.75, 0.03);
}

TEST(Sampler, TopKTopPMinPRestrictCandidates) {
  float logits[4] = {3.0f, 2.9f, 0.0f, -1.0f};
  SamplingParams p;
  p.temperature = 1.0f;
  p.has_seed = true;
  p.top_k = 1;
  Sampler k1(p);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(k1.Sample(logits, 4, nullptr), 0);
  p.top_k = 0;
  p.top_p = 0.5f;
  Sampler tp(p);
  for (int i = 0; i < 100; ++i) EXPECT_EQ(tp.Sample(logits, 4, nullptr), 0);
  p.top_p = 1.0f;
  p.min_p = 0.5f;
  Sampler mp(p);
  for (int i = 0; i < 200; ++i) EXPECT_LT(mp.Sample(logits, 4, nullptr), 2);
}

}  // namespace
}  // namespace pg
