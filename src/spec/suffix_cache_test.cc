#include "spec/suffix_cache.h"

#include <gtest/gtest.h>

#include <random>

namespace pg {
namespace {

TEST(SuffixCacheTest, ProposesTheMostFrequentContinuation) {
  SuffixCache c;
  c.Insert(std::vector<int32_t>{1, 2, 3, 4, 5});
  c.Insert(std::vector<int32_t>{7, 2, 3, 9, 9});
  c.Insert(std::vector<int32_t>{8, 2, 3, 4, 6});
  std::vector<int32_t> d;
  // Context ends "... 2 3": continuations 4 (twice) and 9 (once).
  EXPECT_EQ(c.Propose(std::vector<int32_t>{0, 0, 2, 3}, 2, &d), 2);
  EXPECT_EQ(d[0], 4);
  // A longer suffix match is more specific: "7 2 3" -> 9 9.
  d.clear();
  EXPECT_EQ(c.Propose(std::vector<int32_t>{7, 2, 3}, 3, &d), 2);
  EXPECT_EQ(d, (std::vector<int32_t>{9, 9}));
  d.clear();
  EXPECT_EQ(c.Propose(std::vector<int32_t>{42}, 3, &d), 0);
  EXPECT_TRUE(c.CheckIntegrity());
}

TEST(SuffixCacheTest, NodeBudgetEvictsOldestDocuments) {
  SuffixCache::Options o;
  o.depth = 6;
  o.max_nodes = 400;
  SuffixCache c(o);
  std::mt19937 rng(3);
  std::vector<std::vector<int32_t>> docs;
  for (int d = 0; d < 40; ++d) {
    std::vector<int32_t> doc;
    for (int i = 0; i < 30; ++i) doc.push_back(static_cast<int32_t>(rng() % 50));
    docs.push_back(doc);
    c.Insert(doc);
    EXPECT_LE(c.nodes(), o.max_nodes);
    ASSERT_TRUE(c.CheckIntegrity()) << "after document " << d;
  }
  EXPECT_LT(c.documents(), 40u);
  // The newest document is still there and predicts itself.
  const auto& last = docs.back();
  std::vector<int32_t> ctx(last.begin(), last.begin() + 10), d;
  ASSERT_GT(c.Propose(ctx, 1, &d), 0);
}

TEST(SuffixCacheTest, DraftStaysWithinDepth) {
  SuffixCache::Options o;
  o.depth = 4;
  o.max_match = 2;
  SuffixCache c(o);
  std::vector<int32_t> doc;
  for (int i = 0; i < 20; ++i) doc.push_back(i);
  c.Insert(doc);
  std::vector<int32_t> d;
  EXPECT_EQ(c.Propose(std::vector<int32_t>{3, 4}, 10, &d), 2);  // match 2 + draft 2 = depth 4
  EXPECT_EQ(d, (std::vector<int32_t>{5, 6}));
}

}  // namespace
}  // namespace pg
