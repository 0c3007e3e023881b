#include "engine/token_counts.h"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <utility>

namespace pg {
namespace {

TEST(TokenCounts, CountsGeneratedAndMarksPromptInFirstSeenOrder) {
  TokenCounts c;
  c.Reserve(8);
  for (int32_t id : {7, 3, 7}) c.AddPrompt(id);
  for (int32_t id : {3, 9, 3, 3}) c.AddGenerated(id);
  ASSERT_EQ(c.entries().size(), 3u);
  EXPECT_EQ(c.entries()[0].id, 7);
  EXPECT_EQ(c.entries()[1].id, 3);
  EXPECT_EQ(c.entries()[2].id, 9);
  EXPECT_TRUE(c.Find(7)->in_prompt);
  EXPECT_EQ(c.Find(7)->generated, 0);
  EXPECT_TRUE(c.Find(3)->in_prompt);
  EXPECT_EQ(c.Find(3)->generated, 3);
  EXPECT_FALSE(c.Find(9)->in_prompt);
  EXPECT_EQ(c.Find(9)->generated, 1);
  EXPECT_EQ(c.Find(4), nullptr);
  EXPECT_EQ(TokenCounts().Find(4), nullptr);
}

TEST(TokenCounts, ReservedRoomTakesAddsWithoutMovingEntries) {
  TokenCounts c;
  c.Reserve(100);
  c.AddGenerated(0);
  const TokenCounts::Entry* first = &c.entries()[0];
  for (int32_t id = 1; id < 100; ++id) c.AddGenerated(id * 4096);  // ids whose low bits collide
  EXPECT_EQ(&c.entries()[0], first);
  EXPECT_EQ(c.entries().size(), 100u);
  EXPECT_EQ(c.Find(99 * 4096)->generated, 1);
}

// Many ids, colliding slots, past the reservation: agrees with a std::map.
TEST(TokenCounts, MatchesAMapThroughGrowth) {
  TokenCounts c;
  c.Reserve(4);
  std::map<int32_t, std::pair<int32_t, bool>> want;
  std::mt19937 rng(3);
  std::uniform_int_distribution<int32_t> id(0, 150000);
  for (int i = 0; i < 20000; ++i) {
    int32_t t = i % 3 == 0 ? id(rng) % 64 : id(rng);  // some ids repeat often
    if (i % 2) {
      c.AddPrompt(t);
      want[t].second = true;
    } else {
      c.AddGenerated(t);
      want[t].first++;
    }
  }
  ASSERT_EQ(c.entries().size(), want.size());
  for (const auto& [t, v] : want) {
    const TokenCounts::Entry* e = c.Find(t);
    ASSERT_NE(e, nullptr) << t;
    EXPECT_EQ(e->generated, v.first) << t;
    EXPECT_EQ(e->in_prompt, v.second) << t;
  }
}

}  // namespace
}  // namespace pg
