// Scheduler: which prefill gets the step's token budget, per policy.
#include "engine/scheduler.h"

#include <gtest/gtest.h>

#include <numeric>

#include "kv/kv_test_util.h"

namespace pg {
namespace {

std::unique_ptr<Sequence> Prompt(SeqId id, int32_t first_token, int64_t n, double arrival_s) {
  auto s = std::make_unique<Sequence>();
  s->id = id;
  s->request.id = std::string("r").append(std::to_string(id));
  s->tokens.resize(static_cast<size_t>(n));
  std::iota(s->tokens.begin(), s->tokens.end(), first_token);  // no shared prefix between prompts
  s->n_prompt = n;
  s->arrival_s = arrival_s;
  return s;
}

int64_t TokensOf(const StepPlan& plan, SeqId id) {
  for (const Sequence* s : plan.batch)
    if (s->id == id) return s->step_tokens;
  return 0;
}

// A long cold prompt is prefilling when a short one arrives: the optimized
// policy runs the short one first, the baseline continues the long one.
struct Case {
  ServePolicy policy;
  int64_t long_next, short_next;  // tokens each gets in the step after the short one arrives
};

class SchedulerPrefillOrder : public testing::TestWithParam<Case> {};

TEST_P(SchedulerPrefillOrder, ShortPromptBesideALongPrefill) {
  auto kv = kvtest::Make(KvCacheConfig::Baseline(kvtest::SmallLayout(), kvtest::kModel, 200 * kvtest::kBlock));
  ASSERT_NE(kv, nullptr);
  EngineConfig config;
  config.policy = GetParam().policy;
  config.max_batch_tokens = 16;
  Scheduler sched(config, *kv);
  sched.AddWaiting(Prompt(1, 1000, 100, 0.0));
  StepPlan first = sched.Schedule(0.0);
  ASSERT_EQ(TokensOf(first, 1), 16);
  first.batch[0]->n_computed += 16;  // the step ran
  sched.AddWaiting(Prompt(2, 5000, 6, 0.1));
  StepPlan second = sched.Schedule(0.1);
  EXPECT_EQ(TokensOf(second, 1), GetParam().long_next);
  EXPECT_EQ(TokensOf(second, 2), GetParam().short_next);
  EXPECT_EQ(second.n_tokens, GetParam().long_next + GetParam().short_next);
}

INSTANTIATE_TEST_SUITE_P(Policies, SchedulerPrefillOrder,
                         testing::Values(Case{ServePolicy::kOptimized, 10, 6}, Case{ServePolicy::kBaseline, 16, 0}));

// Shortest-first never starves: a prefill that started more than the
// fairness bound ago takes the budget before shorter ones.
TEST(SchedulerPrefillOrderTest, OverduePrefillGoesFirst) {
  auto kv = kvtest::Make(KvCacheConfig::Baseline(kvtest::SmallLayout(), kvtest::kModel, 200 * kvtest::kBlock));
  ASSERT_NE(kv, nullptr);
  EngineConfig config;
  config.policy = ServePolicy::kOptimized;
  config.max_batch_tokens = 16;
  Scheduler sched(config, *kv);
  sched.AddWaiting(Prompt(1, 1000, 100, 0.0));
  StepPlan first = sched.Schedule(0.0);
  ASSERT_EQ(TokensOf(first, 1), 16);
  first.batch[0]->n_computed += 16;
  const double later = config.fairness_s + 1.0;
  sched.AddWaiting(Prompt(2, 5000, 6, later));
  StepPlan second = sched.Schedule(later);
  EXPECT_EQ(TokensOf(second, 1), 16);
  EXPECT_EQ(TokensOf(second, 2), 0);
}

// Long prefills in slices (EngineConfig::prefill_slice_tokens): a prompt with
// more than long_prefill_tokens left advances a slice per step while others
// share the server, and not at all in a step that finishes a short prefill;
// alone, at most long_prefill_tokens per step.
class SchedulerSliceTest : public testing::Test {
 protected:
  void SetUp() override {
    kv_ = kvtest::Make(KvCacheConfig::Baseline(kvtest::SmallLayout(), kvtest::kModel, 400 * kvtest::kBlock));
    ASSERT_NE(kv_, nullptr);
    config_.policy = ServePolicy::kOptimized;
    config_.max_batch_tokens = 64;
    config_.prefill_slice_tokens = 8;
    config_.long_prefill_tokens = 32;
    sched_ = std::make_unique<Scheduler>(config_, *kv_);
  }
  // What the engine does after a step: the chunks computed, and a sequence
  // that reached its end samples a token (and decodes from then on).
  static void Ran(const StepPlan& plan) {
    for (Sequence* s : plan.batch) {
      s->n_computed += s->step_tokens;
      if (s->remaining_to_compute() == 0) {
        s->tokens.push_back(7);
        s->n_generated++;
      }
    }
  }
  // Prompts 1 (300 tokens) and 2 (100), both long, admitted in one step.
  StepPlan TwoLongPrompts() {
    sched_->AddWaiting(Prompt(1, 1000, 300, 0.0));
    sched_->AddWaiting(Prompt(2, 5000, 100, 0.0));
    return sched_->Schedule(0.0);
  }
  std::unique_ptr<KvCacheManager> kv_;
  EngineConfig config_;  // the scheduler reads it by reference: a test may change it
  std::unique_ptr<Scheduler> sched_;
};

// Alone, a long prefill advances the threshold's worth a step (a request
// arriving meanwhile waits for that, not for the whole budget), then takes
// what is left once that is no longer long.
TEST_F(SchedulerSliceTest, ALongPrefillAloneAdvancesAtMostTheThreshold) {
  sched_->AddWaiting(Prompt(1, 1000, 72, 0.0));
  StepPlan plan = sched_->Schedule(0.0);
  EXPECT_EQ(TokensOf(plan, 1), 32);
  Ran(plan);
  plan = sched_->Schedule(0.1);  // 40 left: still long
  EXPECT_EQ(TokensOf(plan, 1), 32);
  Ran(plan);
  plan = sched_->Schedule(0.2);  // 8 left
  EXPECT_EQ(TokensOf(plan, 1), 8);
}

TEST_F(SchedulerSliceTest, ALongPrefillAloneAdvancesAtLeastASlice) {
  config_.long_prefill_tokens = 4;  // below the 8-token slice
  sched_->AddWaiting(Prompt(1, 1000, 100, 0.0));
  EXPECT_EQ(TokensOf(sched_->Schedule(0.0), 1), 8);
}

TEST_F(SchedulerSliceTest, AShortPrefillAloneTakesItAll) {
  sched_->AddWaiting(Prompt(1, 1000, 32, 0.0));
  EXPECT_EQ(TokensOf(sched_->Schedule(0.0), 1), 32);
}

TEST_F(SchedulerSliceTest, AShortTurnRunsAloneThenTheLongOneAdvancesBySlices) {
  sched_->AddWaiting(Prompt(1, 1000, 200, 0.0));
  StepPlan plan = sched_->Schedule(0.0);
  ASSERT_EQ(TokensOf(plan, 1), 32);
  Ran(plan);
  sched_->AddWaiting(Prompt(2, 5000, 20, 0.1));  // short: 20 <= 32 tokens
  plan = sched_->Schedule(0.1);
  EXPECT_EQ(TokensOf(plan, 2), 20);
  EXPECT_EQ(TokensOf(plan, 1), 0) << "a step that finishes a short prefill carries no long one";
  Ran(plan);
  plan = sched_->Schedule(0.2);  // 2 decodes now: the long prefill gets a slice beside it
  EXPECT_EQ(TokensOf(plan, 2), 1);
  EXPECT_EQ(TokensOf(plan, 1), 8);
}

TEST_F(SchedulerSliceTest, EachLongPrefillAdvancesASlice) {
  const StepPlan plan = TwoLongPrompts();
  EXPECT_EQ(TokensOf(plan, 2), 8);
  EXPECT_EQ(TokensOf(plan, 1), 8);
}

// The debug step log's description: each sequence's tokens this step and the
// position they start at.
TEST_F(SchedulerSliceTest, DescribeStepNamesEachSequencesChunk) {
  StepPlan plan = TwoLongPrompts();
  EXPECT_EQ(DescribeStep(plan), "16 tokens: 2:8@0 1:8@0");
  Ran(plan);
  EXPECT_EQ(DescribeStep(sched_->Schedule(0.1)), "16 tokens: 2:8@8 1:8@8");
}

TEST_F(SchedulerSliceTest, ManyLongPrefillsStillFillTheBudget) {
  for (SeqId id = 1; id <= 10; ++id) sched_->AddWaiting(Prompt(id, 1000 * static_cast<int32_t>(id), 100, 0.0));
  const StepPlan plan = sched_->Schedule(0.0);
  EXPECT_EQ(plan.n_tokens, 64);
}

TEST_F(SchedulerSliceTest, AnOverduePrefillIsNotSliced) {
  sched_->AddWaiting(Prompt(1, 1000, 300, 0.0));
  StepPlan plan = sched_->Schedule(0.0);
  Ran(plan);
  const double later = config_.fairness_s + 1.0;
  sched_->AddWaiting(Prompt(2, 5000, 100, later));
  plan = sched_->Schedule(later);
  EXPECT_EQ(TokensOf(plan, 1), 64);
  EXPECT_EQ(TokensOf(plan, 2), 0);
}

TEST_F(SchedulerSliceTest, ZeroSliceKeepsWholeChunks) {
  config_.prefill_slice_tokens = 0;
  const StepPlan plan = TwoLongPrompts();
  EXPECT_EQ(TokensOf(plan, 2), 64);
  EXPECT_EQ(TokensOf(plan, 1), 0);
}

TEST_F(SchedulerSliceTest, ZeroSliceKeepsWholeChunksAlone) {
  config_.prefill_slice_tokens = 0;
  sched_->AddWaiting(Prompt(1, 1000, 200, 0.0));
  EXPECT_EQ(TokensOf(sched_->Schedule(0.0), 1), 64);
}

TEST_F(SchedulerSliceTest, TheBaselinePolicyNeverSlices) {
  config_.policy = ServePolicy::kBaseline;
  const StepPlan plan = TwoLongPrompts();
  EXPECT_EQ(TokensOf(plan, 1), 64);
}

TEST_F(SchedulerSliceTest, TheBaselinePolicyTakesTheWholeBudgetAlone) {
  config_.policy = ServePolicy::kBaseline;
  sched_->AddWaiting(Prompt(1, 1000, 200, 0.0));
  EXPECT_EQ(TokensOf(sched_->Schedule(0.0), 1), 64);
}

}  // namespace
}  // namespace pg
