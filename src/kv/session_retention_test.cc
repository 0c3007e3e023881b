#include "kv/session_retention.h"

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
