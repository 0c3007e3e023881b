#include "engine/step_cost_model.h"

#include <gtest/gtest.h>

#include <random>

namespace pg {
namespace {

// A made-up machine: 0.4 ms per step, 0.2 us per plain row, 0.25 ms per
// logits row, 1 ns per key loaded, 0.3 ns per key attended.
double TrueSeconds(const StepShape& s) {
  return 4e-4 + 2e-7 * s.plain_rows + 2.5e-4 * s.logit_rows + 1e-9 * s.entry_keys + 3e-10 * s.row_keys;
}

StepShape RandomStep(std::mt19937_64& rng) {
  StepShape s;
  const int decoders = static_cast<int>(rng() % 5);
  for (int i = 0; i < decoders; ++i) {
    const int64_t pos = 100 + static_cast<int64_t>(rng() % 3000);
    const int64_t rows = 1 + static_cast<int64_t>(rng() % 5);  // a verification of up to 4 drafts
    s.AddEntry(pos, rows, rows);
  }
  if (rng() % 2 || decoders == 0) {
    const int64_t chunk = 1 + static_cast<int64_t>(rng() % 512);
    s.AddEntry(static_cast<int64_t>(rng() % 2000), chunk, rng() % 2);
  }
  return s;
}

// Observes n random steps, each taking seconds(step).
template <typename Seconds>
void ObserveRandomSteps(StepCostModel* m, std::mt19937_64& rng, int n, Seconds seconds) {
  for (int i = 0; i < n; ++i) {
    const StepShape s = RandomStep(rng);
    m->Observe(s, seconds(s));
  }
}

TEST(StepCostModel, NotReadyUntilEnoughSteps) {
  StepCostModel m;
  StepShape s;
  s.AddEntry(10, 1, 1);
  for (int i = 0; i + 1 < StepCostModel::kMinObservations; ++i) m.Observe(s, 1e-3);
  EXPECT_FALSE(m.ready());
  m.Observe(s, 1e-3);
  EXPECT_TRUE(m.ready());
}

TEST(StepCostModel, LearnsTheCostsOfMixedSteps) {
  std::mt19937_64 rng(3);
  std::normal_distribution<double> noise(0, 0.02);
  StepCostModel m;
  ObserveRandomSteps(&m, rng, 2000, [&](const StepShape& s) { return TrueSeconds(s) * (1 + noise(rng)); });
  ASSERT_TRUE(m.ready());
  for (int i = 0; i < 50; ++i) {
    const StepShape s = RandomStep(rng);
    EXPECT_NEAR(m.Predict(s), TrueSeconds(s), 0.05 * TrueSeconds(s));
  }
  // The marginal logits row at 2,000 keys: 0.25 ms + 1 ns + 0.6 us.
  EXPECT_NEAR(m.ExtraRowSeconds(2000), 2.5e-4 + 1e-9 + 6e-7, 0.1 * 2.5e-4);
}

TEST(StepCostModel, FollowsAMachineThatSlowsDown) {
  std::mt19937_64 rng(5);
  StepCostModel m;
  ObserveRandomSteps(&m, rng, 500, TrueSeconds);
  // Now everything takes twice as long.
  ObserveRandomSteps(&m, rng, 2000, [](const StepShape& s) { return 2 * TrueSeconds(s); });
  const StepShape s = RandomStep(rng);
  EXPECT_NEAR(m.Predict(s), 2 * TrueSeconds(s), 0.05 * 2 * TrueSeconds(s));
}

TEST(StepCostModel, CoefficientsStayNonNegative) {
  // A machine with no per-row cost at all, timed with noise: the fit must
  // not trade a negative row cost against the others.
  std::mt19937_64 rng(9);
  std::normal_distribution<double> noise(0, 0.05);
  StepCostModel m;
  ObserveRandomSteps(&m, rng, 1000, [&](const StepShape& s) {
    return (4e-4 + 2.5e-4 * s.logit_rows + 3e-10 * s.row_keys) * (1 + noise(rng));
  });
  for (double c : m.seconds_per_unit()) EXPECT_GE(c, 0);
  EXPECT_TRUE(m.usable());
  const StepShape s = RandomStep(rng);
  const double want = 4e-4 + 2.5e-4 * s.logit_rows + 3e-10 * s.row_keys;
  EXPECT_NEAR(m.Predict(s), want, 0.1 * want);
}

TEST(StepCostModel, TimesUnrelatedToTheShapeAreNotUsable) {
  // Outside load swinging every step's time: no prediction to act on.
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<double> chaos(1e-3, 1e-1);
  StepCostModel m;
  for (int i = 0; i < 1000; ++i) m.Observe(RandomStep(rng), chaos(rng));
  EXPECT_TRUE(m.ready());
  EXPECT_GT(m.relative_error(), StepCostModel::kMaxUsableError);
  EXPECT_FALSE(m.usable());
}

TEST(StepCostModel, ShapeCountsRowsAndKeys) {
  StepShape s;
  s.AddEntry(/*start_pos=*/8, /*n_tokens=*/3, /*logit_rows=*/3);  // a verification of 2 drafts
  s.AddEntry(0, 4, 1);                                            // a prefill chunk
  EXPECT_EQ(s.plain_rows, 3);
  EXPECT_EQ(s.logit_rows, 4);
  EXPECT_EQ(s.entry_keys, 11 + 4);
  EXPECT_EQ(s.row_keys, (9 + 10 + 11) + (1 + 2 + 3 + 4));
}

}  // namespace
}  // namespace pg
