#include "spec/rejection_sampling.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace pg {
namespace {

// Draft from q, then the test: the emitted tokens follow p (200k trials,
// every probability within 5 standard errors), and the acceptance rate is
// sum_x min(p(x), q(x)).
TEST(SpeculativeRejection, EmittedTokensFollowTheTarget) {
  const std::vector<float> p = {0.5f, 0.3f, 0.15f, 0.05f, 0.0f};
  const std::vector<float> q = {0.1f, 0.2f, 0.3f, 0.2f, 0.2f};
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> u(0, 1);
  std::discrete_distribution<int32_t> from_q(q.begin(), q.end());
  const int n = 200000;
  std::vector<int64_t> count(p.size());
  int64_t accepted = 0;
  for (int i = 0; i < n; ++i) {
    const int32_t d = from_q(rng);
    const RejectionStep r = SpeculativeRejection(p, q, d, u(rng), u(rng));
    ASSERT_GE(r.token, 0);
    count[static_cast<size_t>(r.token)]++;
    if (r.accepted) {
      EXPECT_EQ(r.token, d);
      ++accepted;
    }
  }
  for (size_t x = 0; x < p.size(); ++x) {
    const double se = std::sqrt(p[x] * (1 - p[x]) / n) + 1e-9;
    EXPECT_NEAR(static_cast<double>(count[x]) / n, p[x], 5 * se + 1e-6) << "token " << x;
  }
  EXPECT_EQ(count[4], 0) << "a token with p = 0 is never emitted";
  double overlap = 0;
  for (size_t x = 0; x < p.size(); ++x) overlap += std::min(p[x], q[x]);
  EXPECT_NEAR(static_cast<double>(accepted) / n, overlap, 0.005);
}

TEST(SpeculativeRejection, EqualDistributionsAlwaysAccept) {
  const std::vector<float> p = {0.25f, 0.25f, 0.5f};
  std::mt19937_64 rng(1);
  std::uniform_real_distribution<double> u(0, 1);
  for (int i = 0; i < 1000; ++i) {
    const int32_t d = i % 3;
    const RejectionStep r = SpeculativeRejection(p, p, d, u(rng), u(rng));
    EXPECT_TRUE(r.accepted);
    EXPECT_EQ(r.token, d);
  }
}

TEST(SpeculativeRejection, RejectedDraftIsNeverReemittedWhenQCoversP) {
  // q >= p at the draft token: the residual is zero there.
  const std::vector<float> p = {0.2f, 0.8f};
  const std::vector<float> q = {0.9f, 0.1f};
  for (double ua : {0.5, 0.9, 0.99}) {
    const RejectionStep r = SpeculativeRejection(p, q, 0, ua, 0.3);
    EXPECT_FALSE(r.accepted);
    EXPECT_EQ(r.token, 1);
  }
  EXPECT_TRUE(SpeculativeRejection(p, q, 0, 0.1, 0.3).accepted);  // 0.1 < 0.2 / 0.9
}

}  // namespace
}  // namespace pg
