#include "kv/policy/session_retention.h"

#include <gtest/gtest.h>

namespace pg {
namespace {

TEST(SessionRetentionTest, HintKeepsUntilTheDeadline) {
  double now = 100;
  SessionRetention r([&] { return now; }, 30);
  const int32_t a = r.Index("a");
  EXPECT_EQ(r.Index("a"), a);
  EXPECT_EQ(r.Index(""), -1);
  EXPECT_FALSE(r.Retained(a));
  EXPECT_FALSE(r.Retained(-1));
  r.Hint("a", 10);
  EXPECT_TRUE(r.Retained(a));
  now = 109.5;
  EXPECT_TRUE(r.Retained(a));
  now = 110;
  EXPECT_FALSE(r.Retained(a));
}

TEST(SessionRetentionTest, DefaultTtlReleaseAndParking) {
  double now = 0;
  SessionRetention r([&] { return now; }, 30);
  r.Hint("tool-session", -1);  // parked for a tool call: the default ttl
  const int32_t s = r.Index("tool-session");
  now = 29;
  EXPECT_TRUE(r.Retained(s));
  r.Release("tool-session");
  EXPECT_FALSE(r.Retained(s));
  r.Release("never-seen");  // ignored
  r.Hint("", 100);          // no session: nothing recorded
  EXPECT_EQ(r.Index("other"), s + 1);
}

}  // namespace
}  // namespace pg

namespace pg {
namespace {

TEST(SessionRetentionTest, BlockHoldsHaveDeadlinesAndBudgets) {
  double now = 0;
  SessionRetention r([&] { return now; }, 30);
  const BlockHash a = RootHash("m", "a"), b = RootHash("m", "b"), c = RootHash("m", "c");
  r.SetBudget(BlockHold::kPinned, 2);
  EXPECT_EQ(r.HoldOf(-1, a), BlockHold::kNone);
  EXPECT_TRUE(r.HoldBlock(a, BlockHold::kPinned, 10));
  EXPECT_TRUE(r.HoldBlock(b, BlockHold::kPinned, -1));    // the default ttl: 30 s
  EXPECT_FALSE(r.HoldBlock(c, BlockHold::kPinned, 10));   // the budget of 2 is full
  EXPECT_TRUE(r.HoldBlock(a, BlockHold::kPinned, 5));     // already held: kept (never shortened)
  EXPECT_TRUE(r.HoldBlock(c, BlockHold::kRetained, 10));  // retain has its own (unbounded) budget
  EXPECT_EQ(r.held(BlockHold::kPinned), 2);
  EXPECT_EQ(r.HoldOf(-1, a), BlockHold::kPinned);
  EXPECT_EQ(r.HoldOf(-1, c), BlockHold::kRetained);
  now = 10;  // a's pin and c's retain expired
  EXPECT_EQ(r.HoldOf(-1, a), BlockHold::kNone);
  EXPECT_EQ(r.HoldOf(-1, c), BlockHold::kNone);
  EXPECT_TRUE(r.HoldBlock(c, BlockHold::kPinned, 10));  // room again once a expired
  EXPECT_EQ(r.held(BlockHold::kPinned), 2);
  EXPECT_EQ(r.held(BlockHold::kRetained), 0);
  r.ReleaseBlock(c);
  EXPECT_EQ(r.held(BlockHold::kPinned), 1);
  EXPECT_EQ(r.HoldOf(-1, c), BlockHold::kNone);
}

TEST(SessionRetentionTest, TheStrongestHoldWins) {
  double now = 0;
  SessionRetention r([&] { return now; }, 30);
  const BlockHash a = RootHash("m", "a");
  const int32_t s = r.Index("agent");
  r.Hint("agent", 100);
  EXPECT_EQ(r.HoldOf(s, a), BlockHold::kSession);
  r.HoldBlock(a, BlockHold::kRetained, 50);
  EXPECT_EQ(r.HoldOf(s, a), BlockHold::kRetained);
  r.SetBudget(BlockHold::kPinned, 1);
  r.HoldBlock(a, BlockHold::kPinned, 20);
  EXPECT_EQ(r.HoldOf(s, a), BlockHold::kPinned);
  now = 30;
  EXPECT_EQ(r.HoldOf(s, a), BlockHold::kRetained);
  now = 60;
  EXPECT_EQ(r.HoldOf(s, a), BlockHold::kSession);
  r.HoldBlock(a, BlockHold::kRetained, 0);  // a zero ttl holds nothing
  EXPECT_EQ(r.held(BlockHold::kRetained), 0);
}

// The name table is bounded: least recently used names go first, retained
// ones are passed over, idle ones are forgotten, and indexes are never reused.
TEST(SessionRetentionTest, NameTableIsBoundedAndForgetsIdleNames) {
  double now = 0;
  SessionRetention r([&] { return now; }, 30);
  r.SetSessionBounds(3, 100);
  const int32_t a = r.Index("a");
  r.Hint("a", 50);  // retained: survives the pressure below
  const int32_t b = r.Index("b");
  r.Index("c");
  r.Index("b");                    // b is now more recent than c
  const int32_t d = r.Index("d");  // full: c (the least recent unretained) goes
  EXPECT_EQ(r.sessions(), 3u);
  EXPECT_EQ(r.forgotten_sessions(), 1);
  EXPECT_EQ(r.Index("a"), a);
  EXPECT_EQ(r.Index("b"), b);
  EXPECT_EQ(r.Index("d"), d);
  EXPECT_TRUE(r.Retained(a));
  const int32_t c2 = r.Index("c");  // c comes back as a new session; b (least recent) goes
  EXPECT_GT(c2, d);
  EXPECT_NE(r.Index("b"), b);
  EXPECT_EQ(r.sessions(), 3u);
  // Idle: unused for 100 s and not retained -> forgotten at the next Expire.
  now = 200;
  r.Hint("a", 1000);
  r.Expire();
  EXPECT_EQ(r.sessions(), 1u);  // a stays (retained); the others were idle
  // Every name retained and the table full: a new name is not tracked.
  r.SetSessionBounds(1, 0);
  EXPECT_EQ(r.Index("new"), -1);
  EXPECT_TRUE(r.Retained(r.Index("a")));
}

// 100,000 names through a table of 1,000: memory stays at the cap.
TEST(SessionRetentionTest, ManyNamesStayWithinTheCap) {
  double now = 0;
  SessionRetention r([&] { return now; }, 30);
  r.SetSessionBounds(1000, 0);
  for (int i = 0; i < 100000; ++i) r.Index("session-" + std::to_string(i));
  EXPECT_EQ(r.sessions(), 1000u);
  EXPECT_EQ(r.forgotten_sessions(), 99000);
}

}  // namespace
}  // namespace pg
