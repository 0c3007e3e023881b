#include "server/core/stop_string_filter.h"

#include <gtest/gtest.h>

#include <string>
#include <utility>
#include <vector>

namespace pg {
namespace {

// One stream through a filter: each piece pushed with what Push returns,
// then whether it stopped, on which stop string, and what Flush returns.
struct Stream {
  const char* name;
  std::vector<std::string> stops;
  std::vector<std::pair<std::string, std::string>> pushes;  // (piece, released)
  bool stopped;
  std::string matched;
  std::string flushed;
};

const Stream kStreams[] = {
    {"PassesTextWithoutStops", {}, {{"hello ", "hello "}, {"world", "world"}}, false, "", ""},
    // After the stop nothing more comes out, not even from Flush.
    {"HoldsBackPossiblePrefixAcrossPieces",
     {"STOP"},
     {{"abc S", "abc "}, {"T", ""}, {"OP and more", ""}, {"ignored", ""}},
     true,
     "STOP",
     ""},
    {"ReleasesFalseAlarm", {"STOP"}, {{"ST", ""}, {"ART", "START"}, {"ST", ""}}, false, "", "ST"},
    {"EarliestOfSeveralStopsWins", {"world", "lo w"}, {{"hello world", "hel"}}, true, "lo w", ""},
    {"MultiByteStop", {"世界"}, {{"你好", "你好"}, {"世", ""}, {"界!", ""}}, true, "世界", ""},
    // The earliest; of those starting there, the shortest.
    {"NamesTheStopItFound", {"ENDING", "END", "X"}, {{" one EN", " one "}, {"DING X", ""}}, true, "END", ""},
    {"NamesTheShortestAtTheEarliestPlace", {"b", "a"}, {{"xxab", "xx"}}, true, "a", ""},
};

class StopStringFilterTest : public ::testing::TestWithParam<Stream> {};

TEST_P(StopStringFilterTest, ReleasesTextUpToTheFirstStop) {
  const Stream& s = GetParam();
  StopStringFilter f(s.stops);
  for (const auto& [piece, released] : s.pushes) EXPECT_EQ(f.Push(piece), released) << "piece " << piece;
  EXPECT_EQ(f.stopped(), s.stopped);
  EXPECT_EQ(f.matched(), s.matched);
  EXPECT_EQ(f.Flush(), s.flushed);
}

INSTANTIATE_TEST_SUITE_P(StopStringFilter, StopStringFilterTest, ::testing::ValuesIn(kStreams),
                         [](const ::testing::TestParamInfo<Stream>& info) { return std::string(info.param.name); });

}  // namespace
}  // namespace pg
