#include "kv/accounting/ghost_index.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <list>
#include <random>

#include "kv/accounting/block_history.h"

namespace pg {
namespace {

TEST(GhostIndexTest, RankCountsLaterEvictionsStillRemembered) {
  GhostIndex g(8);
  for (uint64_t fp = 1; fp <= 5; ++fp) g.NoteEvicted(1, fp, double(fp));
  GhostIndex::Record r;
  ASSERT_TRUE(g.Find(1, 1, &r));
  EXPECT_EQ(r.rank, 4);
  EXPECT_EQ(r.evicted_at_s, 1.0);
  g.Forget(3);  // block 3 came back
  ASSERT_TRUE(g.Find(1, 1, &r));
  EXPECT_EQ(r.rank, 3);
  EXPECT_FALSE(g.Find(1, 3, &r));
  EXPECT_FALSE(g.Find(0, 1, &r));  // other tiers keep their own rings
  ASSERT_TRUE(g.Find(1, 5, &r));
  EXPECT_EQ(r.rank, 0);
}

TEST(GhostIndexTest, ForgetsTheOldestBeyondCapacity) {
  GhostIndex g(4);
  for (uint64_t fp = 1; fp <= 6; ++fp) g.NoteEvicted(2, fp, 0);
  GhostIndex::Record r;
  EXPECT_FALSE(g.Find(2, 1, &r));
  EXPECT_FALSE(g.Find(2, 2, &r));
  ASSERT_TRUE(g.Find(2, 3, &r));
  EXPECT_EQ(r.rank, 3);
  EXPECT_EQ(g.size(2), 4);
  g.NoteEvicted(2, 4, 0);  // evicted again: moves to the front, and the window of 4 evictions moves on
  ASSERT_TRUE(g.Find(2, 4, &r));
  EXPECT_EQ(r.rank, 0);
  EXPECT_FALSE(g.Find(2, 3, &r));
  ASSERT_TRUE(g.Find(2, 5, &r));
  EXPECT_EQ(r.rank, 2);
  EXPECT_EQ(g.size(2), 3);
}

// The ghost's claim: under LRU, a miss in a cache of C blocks would have hit
// a cache of C + K blocks iff its rank < K. Checked against two real LRU
// simulations on a random trace with reuse at all distances.
TEST(GhostIndexTest, RankPredictsABiggerLruExactly) {
  constexpr size_t C = 16, K = 12;
  struct Lru {
    size_t cap;
    std::list<uint64_t> order;  // front = most recent
    // True on a hit; on a miss inserts x and sets *evicted (0 = none).
    bool Access(uint64_t x, uint64_t* evicted) {
      *evicted = 0;
      auto it = std::find(order.begin(), order.end(), x);
      const bool hit = it != order.end();
      if (hit) order.erase(it);
      order.push_front(x);
      if (order.size() > cap) {
        *evicted = order.back();
        order.pop_back();
      }
      return hit;
    }
  } small{C, {}}, big{C + K, {}};
  GhostIndex ghost(64);
  std::mt19937 rng(7);
  int64_t predicted = 0, measured = 0, misses = 0;
  for (int step = 0; step < 5000; ++step) {
    const uint64_t x = 1 + (rng() % 3 == 0 ? rng() % 60 : rng() % 30);
    uint64_t ev = 0, ev_big = 0;
    GhostIndex::Record r;
    const bool in_ghost = ghost.Find(1, x, &r);
    const bool big_hit = big.Access(x, &ev_big);
    if (small.Access(x, &ev)) continue;
    ++misses;
    const bool predict = in_ghost && r.rank < int64_t(K);
    EXPECT_EQ(predict, big_hit) << "step " << step;
    predicted += predict;
    measured += big_hit;
    ghost.Forget(x);
    if (ev) ghost.NoteEvicted(1, ev, 0);
  }
  EXPECT_GT(misses, 1000);
  EXPECT_GT(measured, 200);
  EXPECT_EQ(predicted, measured);
}

TEST(BlockHistoryTest, RemembersWhatWasPublishedAndForgetsWhenFull) {
  BlockHistory h(64);
  h.NotePublished(11, 7);
  EXPECT_TRUE(h.Seen(11));
  EXPECT_FALSE(h.Seen(7));
  EXPECT_TRUE(h.HadChild(7));
  EXPECT_FALSE(h.HadChild(11));
  FingerprintSet s(8);                                    // two buckets of four
  for (uint64_t fp = 2; fp <= 40; fp += 2) s.Insert(fp);  // all in bucket 0: it overflows
  int kept = 0;
  for (uint64_t fp = 2; fp <= 40; fp += 2) kept += s.Contains(fp);
  EXPECT_EQ(kept, 4);
  EXPECT_TRUE(s.Contains(40));  // the newest is always kept
}

}  // namespace
}  // namespace pg
