#include "model/topk_select.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

namespace pg {
namespace {

std::vector<int32_t> Select(const std::vector<float>& s, int64_t k, bool scalar) {
  std::vector<int32_t> out(s.size()), scratch(s.size());
  const int64_t n = scalar ? TopKSelectScalar(s.data(), s.size(), k, out.data(), scratch.data())
                           : TopKSelect(s.data(), s.size(), k, out.data(), scratch.data());
  out.resize(static_cast<size_t>(n));
  return out;
}

TEST(TopKSelect, KeepsTheHighestInPositionOrder) {
  const std::vector<float> s{0.5f, 3.0f, -1.0f, 2.0f, 7.0f, 0.0f};
  EXPECT_EQ(Select(s, 3, false), (std::vector<int32_t>{1, 3, 4}));
  EXPECT_EQ(Select(s, 3, true), (std::vector<int32_t>{1, 3, 4}));
}

TEST(TopKSelect, CoversEverythingWhenTheContextFits) {
  const std::vector<float> s{NAN, 1.0f, -INFINITY};
  EXPECT_EQ(Select(s, 3, false), (std::vector<int32_t>{0, 1, 2}));
  EXPECT_EQ(Select(s, 16, false), (std::vector<int32_t>{0, 1, 2}));
}

TEST(TopKSelect, TiesGoToTheLowerPositionAndNanRanksLast) {
  const std::vector<float> s{1.0f, NAN, 1.0f, 1.0f, 0.0f};
  EXPECT_EQ(Select(s, 2, false), (std::vector<int32_t>{0, 2}));
  EXPECT_EQ(Select(s, 4, false), (std::vector<int32_t>{0, 2, 3, 4}));
  EXPECT_EQ(Select(s, 4, true), (std::vector<int32_t>{0, 2, 3, 4}));
}

TEST(TopKSelect, MatchesTheScalarReferenceOnRandomScoresWithTies) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const int64_t n = 1 + rng() % 300, k = 1 + rng() % 64;
    std::vector<float> s(static_cast<size_t>(n));
    for (float& x : s) x = static_cast<float>(static_cast<int>(rng() % 17) - 8) * 0.25f;  // many ties
    EXPECT_EQ(Select(s, k, false), Select(s, k, true)) << "n " << n << " k " << k;
  }
}

}  // namespace
}  // namespace pg
