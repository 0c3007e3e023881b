#include "spec/verify_planner.h"

#include <gtest/gtest.h>

#include <functional>
#include <random>

namespace pg {
namespace {

double Ratio(double t0, int64_t n, const std::vector<VerifyCandidate>& c, const std::vector<int>& k) {
  double gain = static_cast<double>(n), cost = t0, pj;
  for (size_t i = 0; i < c.size(); ++i) {
    pj = 1;
    for (int j = 1; j <= k[i]; ++j) {
      pj *= c[i].p;
      gain += pj;
      cost += c[i].row_s + (j - 1) * c[i].row_growth_s;
    }
  }
  return gain / cost;
}

TEST(VerifyPlanner, NextToALongPrefillEveryDraftIsVerified) {
  // A 100 ms step (a prefill chunk) and rows of 0.3 ms: all four drafts stay.
  std::vector<VerifyCandidate> c(4, VerifyCandidate{0.6, 4, 0.3e-3, 1e-7});
  const VerifyPlan plan = PlanVerification(0.1, 5, c);
  for (int k : plan.keep) EXPECT_EQ(k, 4);
  EXPECT_GT(plan.ratio, 5 / 0.1);
}

TEST(VerifyPlanner, RowsCostingWhatTheySaveAreDropped) {
  // Four decoders, 1 ms fixed + 1 ms per row: a draft row (1 ms) yields at
  // most p = 0.6 tokens while the step makes 0.8 progress per ms.
  std::vector<VerifyCandidate> c(4, VerifyCandidate{0.6, 4, 1e-3, 0});
  const VerifyPlan plan = PlanVerification(5e-3, 4, c);
  for (int k : plan.keep) EXPECT_EQ(k, 0);
  EXPECT_DOUBLE_EQ(plan.ratio, 4 / 5e-3);
}

TEST(VerifyPlanner, ASingleSequenceOnAMemoryBoundStepKeepsAShortDraftWhenAcceptanceIsLow) {
  // 10 ms step, 0.5 ms rows: p = 0.3 is worth two positions (0.3, 0.09 vs
  // lambda * 0.5 ms), not a third (0.027).
  std::vector<VerifyCandidate> c{{0.3, 8, 0.5e-3, 0}};
  const VerifyPlan plan = PlanVerification(10e-3, 1, c);
  EXPECT_EQ(plan.keep[0], 2);
}

TEST(VerifyPlanner, NeverDraftsWithZeroAcceptance) {
  std::vector<VerifyCandidate> c(3, VerifyCandidate{0.0, 4, 1e-6, 0});
  const VerifyPlan plan = PlanVerification(1.0, 3, c);
  for (int k : plan.keep) EXPECT_EQ(k, 0);
}

TEST(VerifyPlanner, MatchesExhaustiveSearch) {
  std::mt19937_64 rng(7);
  std::uniform_real_distribution<double> u(0, 1);
  for (int trial = 0; trial < 300; ++trial) {
    const int n = 1 + static_cast<int>(rng() % 3);
    std::vector<VerifyCandidate> c(static_cast<size_t>(n));
    for (auto& x : c) x = {u(rng), static_cast<int>(rng() % 4), 1e-4 + 2e-3 * u(rng), 1e-5 * u(rng)};
    const double t0 = 1e-4 + 1e-2 * u(rng);
    const int64_t entries = n + static_cast<int64_t>(rng() % 3);
    double best = 0;
    std::vector<int> k(static_cast<size_t>(n), 0);
    std::function<void(size_t)> search = [&](size_t i) {
      if (i == k.size()) {
        best = std::max(best, Ratio(t0, entries, c, k));
        return;
      }
      for (int j = 0; j <= c[i].drafted; ++j) {
        k[i] = j;
        search(i + 1);
      }
    };
    search(0);
    const VerifyPlan plan = PlanVerification(t0, entries, c);
    EXPECT_NEAR(plan.ratio, best, best * 1e-9) << "trial " << trial;
    EXPECT_NEAR(Ratio(t0, entries, c, plan.keep), plan.ratio, best * 1e-9) << "trial " << trial;
  }
}

}  // namespace
}  // namespace pg
