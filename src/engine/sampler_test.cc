#include "engine/sampler.h"

#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <vector>

namespace pg {
namespace {

// Distribution() of `s` on `logits`, as a map id -> probability.
std::map<int32_t, float> Dist(Sampler& s, const std::vector<float>& logits) {
  std::vector<std::pair<int32_t, float>> d;
  s.Distribution(logits.data(), static_cast<int64_t>(logits.size()), &d);
  return std::map<int32_t, float>(d.begin(), d.end());
}

void ExpectDist(const std::map<int32_t, float>& got, const std::map<int32_t, float>& want) {
  ASSERT_EQ(got.size(), want.size());
  for (const auto& [id, p] : want) {
    ASSERT_TRUE(got.count(id)) << "token " << id << " was filtered out";
    EXPECT_NEAR(got.at(id), p, 2e-6) << "token " << id;
  }
}

// Makes `s` return `token` (every other logit -1000: probability exp(-1000) = 0
// even after the penalties), so it counts as generated.
void Force(Sampler& s, int32_t token, int64_t n) {
  std::vector<float> logits(static_cast<size_t>(n), -1000.0f);
  logits[static_cast<size_t>(token)] = 0.0f;
  ASSERT_EQ(s.Sample(logits.data(), n, nullptr), token);
}

TEST(Sampler, TemperatureDividesLogits) {
  SamplingParams p;
  p.temperature = 2.0f;
  Sampler s(p);
  // {2, 0, -2} / 2 = {1, 0, -1}: e^1, e^0, e^-1 over their sum 4.086161.
  ExpectDist(Dist(s, {2, 0, -2}), {{0, 0.665241f}, {1, 0.244728f}, {2, 0.090031f}});
}

TEST(Sampler, TinyTemperatureIsGreedy) {
  SamplingParams p;
  p.temperature = 1e-6f;  // dividing 1.0 by it would still fit, 1e-40 would not
  Sampler s(p);
  ExpectDist(Dist(s, {0.5f, 1.5f, 1.0f}), {{1, 1.0f}});
  p.temperature = 1e-40f;
  Sampler t(p);
  float logits[3] = {0.5f, 1.5f, 1.0f};
  EXPECT_EQ(t.Sample(logits, 3, nullptr), 1);
}

TEST(Sampler, LogitBiasIsAddedBeforeSoftmax) {
  SamplingParams p;
  p.logit_bias = {{0, 1.0f}, {3, 3.0f}};
  Sampler s(p);
  // {1, 2, 0, -1} + {1, 0, 0, 3} = {2, 2, 0, 2}: e^2 / (3e^2 + 1) = 0.318945
  // for tokens 0, 1, 3 and 1 / (3e^2 + 1) = 0.043165 for token 2.
  ExpectDist(Dist(s, {1, 2, 0, -1}), {{0, 0.318945f}, {1, 0.318945f}, {2, 0.043165f}, {3, 0.318945f}});
}

TEST(Sampler, LogitBiasAppliesToGreedyButLogprobsStayRaw) {
  SamplingParams p;
  p.temperature = 0;
  p.logprobs = true;
  p.logit_bias = {{2, 100.0f}};
  Sampler s(p);
  float logits[3] = {5.0f, 1.0f, 0.0f};
  TokenEvent ev;
  for (int i = 0; i < 5; ++i) EXPECT_EQ(s.Sample(logits, 3, &ev), 2);
  // The model's own log-probability of token 2: 0 - log(e^5 + e^1 + e^0) = -5.024745.
  EXPECT_NEAR(ev.logprob, -5.024745, 1e-5);
  p.logit_bias = {{0, -100.0f}};  // a ban: the argmax moves to token 1
  Sampler ban(p);
  EXPECT_EQ(ban.Sample(logits, 3, nullptr), 1);
}

TEST(Sampler, FrequencyAndPresencePenaltiesCountGeneratedTokensOnly) {
  SamplingParams p;
  p.frequency_penalty = 0.5f;
  p.presence_penalty = 0.25f;
  const std::vector<int32_t> prompt = {0, 0, 3};  // never penalised by these two
  Sampler s(p, prompt);
  Force(s, 1, 4);
  Force(s, 1, 4);
  Force(s, 2, 4);
  // counts {0, 2, 1, 0}: token 1: 2 - 0.5 * 2 - 0.25 = 0.75; token 2:
  // 0.5 - 0.5 * 1 - 0.25 = -0.25; tokens 0 and 3 unchanged (1 and 0).
  // softmax(1, 0.75, -0.25, 0) = {0.410984, 0.320075, 0.117749, 0.151193}.
  ExpectDist(Dist(s, {1, 2, 0.5f, 0}), {{0, 0.410984f}, {1, 0.320075f}, {2, 0.117749f}, {3, 0.151193f}});
}

TEST(Sampler, NegativeFrequencyPenaltyRaisesRepeatedTokens) {
  SamplingParams p;
  p.frequency_penalty = -2.0f;
  Sampler s(p);
  Force(s, 1, 2);
  // token 1: 0 + 2 * 1 = 2; softmax(0, 2) = {0.119203, 0.880797}.
  ExpectDist(Dist(s, {0, 0}), {{0, 0.119203f}, {1, 0.880797f}});
}

TEST(Sampler, RepetitionPenaltyCoversPromptAndGeneratedOncePerToken) {
  SamplingParams p;
  p.repetition_penalty = 2.0f;
  const std::vector<int32_t> prompt = {0, 2, 2};
  Sampler s(p, prompt);
  Force(s, 3, 5);
  Force(s, 0, 5);  // in the prompt and generated: still divided once
  // seen {0, 2, 3}: 2 / 2 = 1; -1 * 2 = -2; -0.5 * 2 = -1. Unseen: 1, 0.5.
  // softmax(1, 1, -2, -1, 0.5) = {0.358211, 0.358211, 0.017834, 0.048479, 0.217266}.
  ExpectDist(Dist(s, {2, 1, -1, -0.5f, 0.5f}),
             {{0, 0.358211f}, {1, 0.358211f}, {2, 0.017834f}, {3, 0.048479f}, {4, 0.217266f}});
}

TEST(Sampler, BiasThenRepetitionThenFrequency) {
  SamplingParams p;
  p.logit_bias = {{0, 1.0f}};
  p.repetition_penalty = 2.0f;
  p.frequency_penalty = 0.5f;
  const std::vector<int32_t> prompt = {0};
  Sampler s(p, prompt);
  Force(s, 0, 3);
  // token 0: (1 + 1) / 2 - 0.5 = 0.5 (penalties first would give 1, bias
  // after the division 1.5); softmax(0.5, 0, 0) = {0.451863, 0.274069, 0.274069}.
  ExpectDist(Dist(s, {1, 0, 0}), {{0, 0.451863f}, {1, 0.274069f}, {2, 0.274069f}});
}

TEST(Sampler, TopKKeepsTheKLargestRenormalised) {
  SamplingParams p;
  p.top_k = 2;
  Sampler s(p);
  // keeps tokens 1 and 2 (logits 3, 2): e^3 / (e^3 + e^2) = 0.731059, 0.268941.
  ExpectDist(Dist(s, {1, 3, 2, 0}), {{1, 0.731059f}, {2, 0.268941f}});
}

TEST(Sampler, TopPKeepsTheSmallestPrefixReachingP) {
  SamplingParams p;
  p.top_p = 0.7f;
  Sampler s(p);
  // probabilities {0.5, 0.3, 0.15, 0.05}: 0.5 < 0.7 <= 0.8, keep two: 0.625, 0.375.
  ExpectDist(Dist(s, {std::log(0.5f), std::log(0.3f), std::log(0.15f), std::log(0.05f)}), {{0, 0.625f}, {1, 0.375f}});
}

// A nucleus larger than the first sorted prefix (256): the prefix grows.
TEST(Sampler, TopPNucleusOfHundredsOfTokens) {
  SamplingParams p;
  p.top_p = 0.503f;
  Sampler s(p);
  // ids 700..999 have probability 2/1300 each, ids 0..699 1/1300: the 300
  // likely ones hold 600/1300 = 0.4615; 0.503 * 1300 = 653.9 needs 54 more
  // of the rest, lowest ids first. Renormalised over 654: 2/654 and 1/654.
  std::vector<float> logits(1000, 0.0f);
  for (int i = 700; i < 1000; ++i) logits[static_cast<size_t>(i)] = std::log(2.0f);
  std::map<int32_t, float> want;
  for (int i = 700; i < 1000; ++i) want[i] = 2.0f / 654;
  for (int i = 0; i < 54; ++i) want[i] = 1.0f / 654;
  ExpectDist(Dist(s, logits), want);
}

TEST(Sampler, MinPDropsBelowAFractionOfTheLargest) {
  SamplingParams p;
  p.min_p = 0.25f;
  Sampler s(p);
  // probabilities {0.12, 0.5, 0.08, 0.3}: floor 0.25 * 0.5 = 0.125 keeps
  // tokens 1 and 3: 0.5 / 0.8 = 0.625, 0.375.
  const std::vector<float> logits = {std::log(0.12f), std::log(0.5f), std::log(0.08f), std::log(0.3f)};
  ExpectDist(Dist(s, logits), {{1, 0.625f}, {3, 0.375f}});
  p.top_k = 3;  // the same through the sorted path
  Sampler k(p);
  ExpectDist(Dist(k, logits), {{1, 0.625f}, {3, 0.375f}});
}

TEST(Sampler, TopKThenTopPThenMinP) {
  SamplingParams p;
  p.top_k = 3;
  p.top_p = 0.75f;
  p.min_p = 0.7f;
  Sampler s(p);
  // {0.4, 0.3, 0.2, 0.1} -> top-k 3, renormalised {4/9, 3/9, 2/9}; top-p:
  // 4/9 < 0.75 <= 7/9, keep two (on the raw 0.4, 0.7, 0.9 it would keep
  // three); min-p floor 0.7 * 4/9 = 0.311 keeps both: {4/7, 3/7}.
  ExpectDist(Dist(s, {std::log(0.4f), std::log(0.3f), std::log(0.2f), std::log(0.1f)}), {{0, 4.0f / 7}, {1, 3.0f / 7}});
}

TEST(Sampler, EachSeededSamplerOwnsItsRng) {
  SamplingParams p;
  p.temperature = 1.0f;
  p.has_seed = true;
  p.seed = 5;
  std::vector<float> flat(1000, 0.0f);
  Sampler alone(p), interleaved(p);
  SamplingParams q = p;
  q.seed = 6;
  Sampler other(q);
  std::vector<int32_t> a, b, c;
  for (int i = 0; i < 50; ++i) a.push_back(alone.Sample(flat.data(), 1000, nullptr));
  for (int i = 0; i < 50; ++i) {  // another request drawing in between changes nothing
    c.push_back(other.Sample(flat.data(), 1000, nullptr));
    b.push_back(interleaved.Sample(flat.data(), 1000, nullptr));
  }
  EXPECT_EQ(a, b);
  EXPECT_NE(a, c);  // 50 uniform draws over 1000 tokens: equal with probability 1e-150
}

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

// min_tokens: the end tokens cannot be picked before min_tokens were generated.
TEST(Sampler, MinTokensHoldsBackTheEndTokens) {
  SamplingParams p;
  p.temperature = 0;
  p.min_tokens = 2;
  Sampler s(p);
  s.HoldBackUntilMinTokens({3});  // token 3 ends the sequence
  const std::vector<float> logits = {0.0f, 1.0f, 0.5f, 9.0f};
  EXPECT_EQ(s.Sample(logits.data(), 4, nullptr), 1);  // 3 held back: the next best
  EXPECT_EQ(s.Sample(logits.data(), 4, nullptr), 1);
  EXPECT_EQ(s.Sample(logits.data(), 4, nullptr), 3);  // two generated: 3 may end it now
}

}  // namespace
}  // namespace pg
