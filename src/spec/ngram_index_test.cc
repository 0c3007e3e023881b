#include "spec/ngram_index.h"

#include <gtest/gtest.h>

#include "spec/draft_length.h"

namespace pg {
namespace {

TEST(NgramIndexTest, ProposesWhatFollowedTheLatestEarlierOccurrence) {
  NgramIndex idx(2, 3);
  std::vector<int32_t> ctx = {1, 2, 3, 4, 5, 9, 9, 1, 2, 3, 7, 8, 6, 2, 3};
  idx.Extend(ctx);
  std::vector<int32_t> d;
  // Suffix "6 2 3" is new; "2 3" last occurred at 8..9, followed by 7 8 6 2 3.
  EXPECT_EQ(idx.Propose(ctx, 3, &d), 3);
  EXPECT_EQ(d, (std::vector<int32_t>{7, 8, 6}));
  // The longest suffix wins over a more recent shorter one.
  ctx = {5, 1, 2, 10, 11, 7, 1, 2, 20, 5, 1, 2};
  NgramIndex idx2(2, 3);
  idx2.Extend(ctx);
  d.clear();
  EXPECT_EQ(idx2.Propose(ctx, 2, &d), 2);
  EXPECT_EQ(d, (std::vector<int32_t>{10, 11}));
}

TEST(NgramIndexTest, IncrementalExtendEqualsOneShot) {
  std::vector<int32_t> ctx;
  NgramIndex inc(1, 4);
  for (int i = 0; i < 300; ++i) {
    ctx.push_back((i * 7 + i / 13) % 17);
    inc.Extend(ctx);
    NgramIndex once(1, 4);
    once.Extend(ctx);
    std::vector<int32_t> a, b;
    EXPECT_EQ(inc.Propose(ctx, 5, &a), once.Propose(ctx, 5, &b));
    EXPECT_EQ(a, b);
    EXPECT_EQ(inc.size(), once.size());
  }
}

TEST(NgramIndexTest, NoMatchNoDraftAndShorterContextResets) {
  NgramIndex idx(2, 4);
  std::vector<int32_t> ctx = {1, 2, 3, 4, 5, 6};
  idx.Extend(ctx);
  std::vector<int32_t> d;
  EXPECT_EQ(idx.Propose(ctx, 4, &d), 0);
  EXPECT_TRUE(d.empty());
  EXPECT_EQ(idx.Propose(ctx, 0, &d), 0);
  std::vector<int32_t> other = {9, 8, 9, 8};
  idx.Extend(other);  // not an extension: re-indexed from scratch
  EXPECT_EQ(idx.Propose(other, 4, &d), 2);
  EXPECT_EQ(d, (std::vector<int32_t>{9, 8}));
}

TEST(DraftLengthTest, GrowsOnFullAcceptanceShrinksOnRejection) {
  DraftLength len(5);
  EXPECT_EQ(len.next(), 5);
  len.Record(5, 1);
  EXPECT_EQ(len.next(), 2);
  len.Record(2, 2);
  EXPECT_EQ(len.next(), 3);
  len.Record(3, 0);
  EXPECT_EQ(len.next(), 1);
  for (int i = 0; i < 10; ++i) len.Record(len.next(), len.next());
  EXPECT_EQ(len.next(), 5);
  len.Record(0, 0);  // no draft: unchanged
  EXPECT_EQ(len.next(), 5);
}

}  // namespace
}  // namespace pg
