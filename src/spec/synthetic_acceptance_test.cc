#include "spec/synthetic_acceptance.h"

#include <gtest/gtest.h>

#include <cmath>

#include "spec/spec_config.h"
#include "spec/speculator.h"

namespace pg {
namespace {

TEST(SyntheticAcceptanceTest, SolvesTheGeometricSum) {
  for (int k : {1, 2, 4, 8}) {
    for (double len : {1.0, 1.5, 2.0, 3.0, 4.5}) {
      if (len > k + 1) continue;
      auto p = SolveConditionalAcceptance(len, k);
      ASSERT_TRUE(p.ok()) << p.status().ToString();
      double s = 0, t = 1;
      for (int i = 0; i < k; ++i) s += (t *= *p);
      EXPECT_NEAR(s, len - 1, 1e-9) << "k=" << k << " L=" << len;
    }
  }
  EXPECT_DOUBLE_EQ(*SolveConditionalAcceptance(5.0, 4), 1.0);
  EXPECT_DOUBLE_EQ(*SolveConditionalAcceptance(1.0, 4), 0.0);
  // L = 3, K = 4: p + p^2 + p^3 + p^4 = 2 -> p ~= 0.7413 (0.7413 + 0.5495 + 0.4073 + 0.3020).
  EXPECT_NEAR(*SolveConditionalAcceptance(3.0, 4), 0.74127, 1e-4);
}

TEST(SyntheticAcceptanceTest, RejectsLengthsOutsideOneToKPlusOne) {
  auto r = SolveConditionalAcceptance(5.5, 4);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("[1, 5]"), std::string::npos) << r.status().message();
  EXPECT_FALSE(SolveConditionalAcceptance(0.5, 4).ok());
  EXPECT_FALSE(SolveConditionalAcceptance(std::nan(""), 4).ok());
  EXPECT_FALSE(SolveConditionalAcceptance(2, 0).ok());
}

TEST(SyntheticAcceptanceTest, MeanStepLengthMatches) {
  const int k = 4;
  const double len = 3.0;
  SyntheticAcceptance a(*SolveConditionalAcceptance(len, k), 7);
  const int n = 200000;
  double sum = 0;
  for (int i = 0; i < n; ++i) sum += a.Accepted(k) + 1;
  EXPECT_NEAR(sum / n, len, 0.02);  // standard error ~0.003
}

TEST(SpecConfigTest, ParsesAndValidates) {
  EXPECT_TRUE(ParseDrafterList("none")->empty());
  auto l = ParseDrafterList("ngram,suffix");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(*l, (std::vector<DrafterKind>{DrafterKind::kNgram, DrafterKind::kSuffix}));
  EXPECT_FALSE(ParseDrafterList("ngram,ngram").ok());
  EXPECT_FALSE(ParseDrafterList("eagle").ok());
  EXPECT_FALSE(ParseDrafterList("ngram,").ok());
  SpecConfig c;
  c.drafters = {DrafterKind::kNgram};
  EXPECT_TRUE(ValidateSpecConfig(c).ok());
  c.synthetic_length = 6;  // K = 4
  EXPECT_FALSE(ValidateSpecConfig(c).ok());
  c.synthetic_length = 3;
  EXPECT_TRUE(ValidateSpecConfig(c).ok());
  c.drafters.clear();
  EXPECT_FALSE(ValidateSpecConfig(c).ok());  // synthetic without a drafter
  c.synthetic_length = 0;
  c.drafters = {DrafterKind::kDraft};
  EXPECT_FALSE(ValidateSpecConfig(c).ok());  // no model file
  c.draft_max = 0;
  c.drafters = {DrafterKind::kNgram};
  EXPECT_FALSE(ValidateSpecConfig(c).ok());
}

TEST(SpecConfigTest, ParsesPolicy) {
  EXPECT_EQ(*ParseSpecPolicy("goodput"), SpecPolicy::kGoodput);
  EXPECT_EQ(*ParseSpecPolicy("always"), SpecPolicy::kAlways);
  EXPECT_FALSE(ParseSpecPolicy("").ok());
  EXPECT_EQ(SpecConfig{}.policy, SpecPolicy::kGoodput);  // the default
}

// An agent's next turn repeats its context: Finished inserts only the
// suffixes that reach past what the cache already holds, and the cache still
// continues across the boundary.
TEST(SpeculatorTest, FinishedInsertsOnlyWhatTheCacheHasNotSeen) {
  SpecConfig c;
  c.drafters = {DrafterKind::kSuffix};
  auto sp = Speculator::Create(c);
  ASSERT_TRUE(sp.ok());
  Speculator& s = **sp;
  std::vector<int32_t> turn1, turn2;
  for (int32_t i = 1; i <= 200; ++i) turn1.push_back(i);
  turn2 = turn1;
  for (int32_t t : {500, 501, 502, 503}) turn2.push_back(t);
  s.Finished(turn1);
  s.Finished(turn2, /*seen=*/200);
  const int depth = s.suffix_cache().depth();
  EXPECT_EQ(s.suffix_cache().tokens(), 200 + (depth - 1) + 4);
  auto seq = s.NewSequence(1);
  std::vector<int32_t> draft;
  std::vector<int32_t> ctx = {7, 7, 199, 200};
  s.Propose(*seq, ctx, 3, &draft);
  EXPECT_EQ(draft, (std::vector<int32_t>{500, 501, 502}));
  EXPECT_TRUE(s.suffix_cache().CheckIntegrity());
}

TEST(SpeculatorTest, ChainsDraftersAndCountsPerDrafter) {
  SpecConfig c;
  c.drafters = {DrafterKind::kNgram, DrafterKind::kSuffix};
  c.draft_max = 3;
  auto sp = Speculator::Create(c);
  ASSERT_TRUE(sp.ok()) << sp.status().ToString();
  Speculator& s = **sp;
  s.Finished(std::vector<int32_t>{50, 51, 52, 53, 54});
  auto seq = s.NewSequence(1);
  std::vector<int32_t> draft;
  // Own context repeats: n-gram proposes.
  std::vector<int32_t> ctx = {1, 2, 3, 4, 1, 2};
  s.Propose(*seq, ctx, 8, &draft);
  EXPECT_EQ(draft, (std::vector<int32_t>{3, 4, 1}));
  EXPECT_EQ(seq->drafter, 0);
  s.Record(*seq, 3, 1);
  // No n-gram hit: the suffix cache's earlier document proposes.
  ctx = {9, 8, 50, 51};
  s.Propose(*seq, ctx, 8, &draft);
  EXPECT_EQ(draft, (std::vector<int32_t>{52, 53}));  // adapted length 1 + 1
  EXPECT_EQ(seq->drafter, 1);
  s.Record(*seq, 2, 2);
  EXPECT_EQ(s.stats()[0].drafted, 3);
  EXPECT_EQ(s.stats()[0].accepted, 1);
  EXPECT_EQ(s.stats()[1].steps, 1);
  EXPECT_EQ(s.stats()[1].accepted, 2);
  // Limit caps the draft; nothing at all leaves no drafter.
  s.Propose(*seq, std::vector<int32_t>{77, 78}, 2, &draft);
  EXPECT_TRUE(draft.empty());
  EXPECT_EQ(seq->drafter, -1);
}

TEST(SpeculatorTest, SyntheticDraftsAreAlwaysFullLength) {
  SpecConfig c;
  c.drafters = {DrafterKind::kNgram};
  c.draft_max = 4;
  c.synthetic_length = 3;
  auto sp = Speculator::Create(c);
  ASSERT_TRUE(sp.ok());
  auto seq = (*sp)->NewSequence(1);
  std::vector<int32_t> draft;
  (*sp)->Propose(*seq, std::vector<int32_t>{5, 6, 7}, 9, &draft);
  EXPECT_EQ(draft.size(), 4u);
  (*sp)->Propose(*seq, std::vector<int32_t>{5, 6, 7}, 2, &draft);
  EXPECT_EQ(draft.size(), 2u);
}

// The draft model runs in the engine: Propose stops at it, ProposeWithModel
// takes its tokens, or goes on down the chain when it has none.
// --spec mtp: a model drafter like draft (the chain stops at it), never with it.
TEST(SpeculatorTest, MtpIsAModelDrafter) {
  auto l = ParseDrafterList("ngram,mtp");
  ASSERT_TRUE(l.ok());
  EXPECT_EQ(*l, (std::vector<DrafterKind>{DrafterKind::kNgram, DrafterKind::kMtp}));
  EXPECT_STREQ(DrafterName(DrafterKind::kMtp), "mtp");
  SpecConfig c;
  c.drafters = {DrafterKind::kDraft, DrafterKind::kMtp};
  c.draft_model = "x.gguf";
  EXPECT_FALSE(ValidateSpecConfig(c).ok());
  c.drafters = {DrafterKind::kNgram, DrafterKind::kMtp};
  c.draft_model.clear();
  c.draft_max = 2;
  auto sp = Speculator::Create(c);
  ASSERT_TRUE(sp.ok()) << sp.status().ToString();
  EXPECT_EQ((*sp)->model_drafter(), 1);
  auto seq = (*sp)->NewSequence(1);
  const std::vector<int32_t> ctx = {1, 2, 3, 4};  // nothing for the n-gram lookup
  std::vector<int32_t> draft;
  (*sp)->Propose(*seq, ctx, 9, &draft);
  EXPECT_TRUE(draft.empty());
  EXPECT_EQ(seq->model_want, 2);
  const std::vector<int32_t> model = {8, 9};
  (*sp)->ProposeWithModel(*seq, ctx, model, &draft);
  EXPECT_EQ(draft, model);
  EXPECT_EQ(seq->drafter, 1);
}

TEST(SpeculatorTest, DraftModelInTheChain) {
  SpecConfig c;
  c.drafters = {DrafterKind::kDraft, DrafterKind::kNgram};
  c.draft_model = "x.gguf";
  c.draft_max = 3;
  auto sp = Speculator::Create(c);
  ASSERT_TRUE(sp.ok()) << sp.status().ToString();
  EXPECT_EQ((*sp)->model_drafter(), 0);
  auto seq = (*sp)->NewSequence(1);
  const std::vector<int32_t> ctx = {5, 6, 7, 5, 6};
  std::vector<int32_t> draft;
  (*sp)->Propose(*seq, ctx, 9, &draft);
  EXPECT_TRUE(draft.empty());
  EXPECT_EQ(seq->model_want, 3);
  const std::vector<int32_t> model = {11, 12, 13, 14};
  (*sp)->ProposeWithModel(*seq, ctx, model, &draft);
  EXPECT_EQ(draft, (std::vector<int32_t>{11, 12, 13}));  // at most model_want
  EXPECT_EQ(seq->drafter, 0);
  EXPECT_EQ(seq->model_want, 0);
  // No model tokens: the n-gram lookup after it in the chain ("5 6" -> 7 5 6).
  (*sp)->Propose(*seq, ctx, 9, &draft);
  (*sp)->ProposeWithModel(*seq, ctx, {}, &draft);
  EXPECT_EQ(draft, (std::vector<int32_t>{7, 5, 6}));
  EXPECT_EQ(seq->drafter, 1);
  // ngram first: the model is asked only when the lookup finds nothing.
  c.drafters = {DrafterKind::kNgram, DrafterKind::kDraft};
  auto sp2 = Speculator::Create(c);
  ASSERT_TRUE(sp2.ok());
  auto seq2 = (*sp2)->NewSequence(1);
  (*sp2)->Propose(*seq2, ctx, 9, &draft);
  EXPECT_EQ(draft, (std::vector<int32_t>{7, 5, 6}));
  EXPECT_EQ(seq2->model_want, 0);
  (*sp2)->Propose(*seq2, std::vector<int32_t>{1, 2, 3}, 9, &draft);
  EXPECT_TRUE(draft.empty());
  EXPECT_EQ(seq2->model_want, 3);
}

}  // namespace
}  // namespace pg
