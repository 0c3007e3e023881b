#include "server/stop_string_filter.h"

#include <gtest/gtest.h>

namespace pg {
namespace {

TEST(StopStringFilter, PassesTextWithoutStops) {
  StopStringFilter f({});
  EXPECT_EQ(f.Push("hello "), "hello ");
  EXPECT_EQ(f.Push("world"), "world");
  EXPECT_EQ(f.Flush(), "");
  EXPECT_FALSE(f.stopped());
}

TEST(StopStringFilter, HoldsBackPossiblePrefixAcrossPieces) {
  StopStringFilter f({"STOP"});
  EXPECT_EQ(f.Push("abc S"), "abc ");
  EXPECT_EQ(f.Push("T"), "");
  EXPECT_EQ(f.Push("OP and more"), "");
  EXPECT_TRUE(f.stopped());
  EXPECT_EQ(f.Push("ignored"), "");
  EXPECT_EQ(f.Flush(), "");
}

TEST(StopStringFilter, ReleasesFalseAlarm) {
  StopStringFilter f({"STOP"});
  EXPECT_EQ(f.Push("ST"), "");
  EXPECT_EQ(f.Push("ART"), "START");
  EXPECT_EQ(f.Push("ST"), "");
  EXPECT_EQ(f.Flush(), "ST");
  EXPECT_FALSE(f.stopped());
}

TEST(StopStringFilter, EarliestOfSeveralStopsWins) {
  StopStringFilter f({"world", "lo w"});
  EXPECT_EQ(f.Push("hello world"), "hel");
  EXPECT_TRUE(f.stopped());
}

TEST(StopStringFilter, MultiByteStop) {
  StopStringFilter f({"世界"});
  EXPECT_EQ(f.Push("你好"), "你好");
  EXPECT_EQ(f.Push("世"), "");
  EXPECT_EQ(f.Push("界!"), "");
  EXPECT_TRUE(f.stopped());
}

TEST(StopStringFilter, NamesTheStopItFound) {
  StopStringFilter f({"ENDING", "END", "X"});
  EXPECT_EQ(f.Push(" one EN"), " one ");
  EXPECT_EQ(f.Push("DING X"), "");
  EXPECT_TRUE(f.stopped());
  EXPECT_EQ(f.matched(), "END");  // the earliest; of those starting there, the shortest
  StopStringFilter g({"b", "a"});
  EXPECT_EQ(g.Push("xxab"), "xx");
  EXPECT_EQ(g.matched(), "a");
}

}  // namespace
}  // namespace pg
