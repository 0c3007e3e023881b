#include "bench/output_match.h"

#include <gtest/gtest.h>

namespace pg::bench {
namespace {

RequestRecord Rec(const std::string& session, int32_t turn, const std::string& text, bool ok = true) {
  RequestRecord r;
  r.session = session;
  r.turn = turn;
  r.ok = ok;
  r.output_hash = OutputHash(text);
  return r;
}

TEST(OutputMatch, HashIsStableAndDistinguishesTexts) {
  EXPECT_EQ(OutputHash("hello"), OutputHash("hello"));
  EXPECT_NE(OutputHash("hello"), OutputHash("hello "));
  EXPECT_EQ(OutputHash("hello").size(), 16u);
  EXPECT_EQ(OutputHash(""), "");
}

TEST(OutputMatch, MatchesBySessionAndTurnAndSkipsFailures) {
  std::vector<RequestRecord> a = {Rec("s#0", 0, "x"), Rec("s#0", 1, "y"), Rec("s#1", 0, "z"),
                                  Rec("s#2", 0, "w", /*ok=*/false)};
  std::vector<RequestRecord> b = {Rec("s#1", 0, "z"), Rec("s#0", 1, "Y"), Rec("s#0", 0, "x"), Rec("s#2", 0, "w"),
                                  Rec("s#3", 0, "only in b")};
  OutputMatch m = MatchOutputs(a, b);
  EXPECT_EQ(m.matched, 3);
  EXPECT_EQ(m.identical, 2);
  ASSERT_EQ(m.differing.size(), 1u);
  EXPECT_EQ(m.differing[0], "s#0 turn 1");
  EXPECT_EQ(DescribeOutputMatch(m), "identical outputs: 2 / 3 matched requests (66.7%); first differing: [s#0 turn 1]");
}

TEST(OutputMatch, NothingMatchedIsNotApplicable) {
  OutputMatch m = MatchOutputs({Rec("a", 0, "x")}, {Rec("b", 0, "x")});
  EXPECT_EQ(m.matched, 0);
  EXPECT_NE(DescribeOutputMatch(m).find("n/a"), std::string::npos);
}

}  // namespace
}  // namespace pg::bench
