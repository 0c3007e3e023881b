#include "spec/acceptance_estimate.h"

#include <gtest/gtest.h>

#include <random>

namespace pg {
namespace {

TEST(AcceptanceEstimate, PriorUntilPositionsAreTried) {
  AcceptanceEstimate e;
  EXPECT_DOUBLE_EQ(e.p(0.3, 4), 0.3);
  e.Record(4, 4);  // 4 tried, 4 accepted
  EXPECT_DOUBLE_EQ(e.p(0.0, 4), 0.5);
  e.Record(4, 1);  // 2 tried (the 2nd rejected), 1 accepted
  EXPECT_EQ(e.tried(), 6);
  EXPECT_DOUBLE_EQ(e.p(0.0, 0), 5.0 / 6.0);
  e.Record(0, 0);  // no draft: nothing tried
  EXPECT_EQ(e.tried(), 6);
}

TEST(AcceptanceEstimate, RecoversAGeometricAcceptance) {
  std::mt19937_64 rng(1);
  std::bernoulli_distribution accept(0.7);
  AcceptanceEstimate e;
  for (int step = 0; step < 20000; ++step) {
    int a = 0;
    while (a < 4 && accept(rng)) ++a;
    e.Record(4, a);
  }
  EXPECT_NEAR(e.p(0.5, 8), 0.7, 0.01);
}

}  // namespace
}  // namespace pg
