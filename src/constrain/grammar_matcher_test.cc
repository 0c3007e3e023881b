// GrammarMatcher on the pieces that are not JSON: raw text with stop
// strings (GLM string values) and JSON strings with forbidden bytes.
#include "constrain/grammar_matcher.h"

#include <gtest/gtest.h>

#include "constrain/constrain_test_util.h"

namespace pg {
namespace {

using testing::Accepts;
using testing::Prefix;

// "<v>" raw text "</v>", the text never holding either stop.
Grammar RawBetweenTags(uint32_t min, uint32_t max) {
  GrammarBuilder b;
  const NodeId raw = b.RawText({"</v>", "</end>"}, min, max);
  const NodeId root = b.Seq({b.Literal("<v>"), raw, b.Literal("</v>")});
  return std::move(b).Build(root);
}

TEST(GrammarMatcherRawText, AnyTextWithoutTheStops) {
  Grammar g = RawBetweenTags(0, Grammar::kUnbounded);
  EXPECT_TRUE(Accepts(g, "<v></v>"));
  EXPECT_TRUE(Accepts(g, "<v>if (a < b) { x = \"</div>\"; }\n\ttab</v>"));
  EXPECT_TRUE(Accepts(g, "<v></v</v>"));  // a stop's prefix, then the stop
  EXPECT_TRUE(Accepts(g, "<v><</v>"));
  EXPECT_TRUE(Accepts(g, "<v>\xC3\xA9\xE4\xB8\xAD</v>"));
  EXPECT_FALSE(Accepts(g, "<v>a</v>b</v>"));  // the first "</v>" ends the text
  EXPECT_FALSE(Prefix(g, "<v>a</end>"));      // the other stop never appears either
  EXPECT_FALSE(Prefix(g, "<v>a\x01"));        // control character
  EXPECT_FALSE(Prefix(g, "<v>\xC0"));         // bad UTF-8
  EXPECT_FALSE(Prefix(g, "<v>\xC3</"));       // a character cut in two
  EXPECT_FALSE(Accepts(g, "<v>\xC3"));
}

TEST(GrammarMatcherRawText, LengthCountsCharacters) {
  Grammar g = RawBetweenTags(2, 3);
  EXPECT_FALSE(Accepts(g, "<v>a</v>"));
  EXPECT_TRUE(Accepts(g, "<v>ab</v>"));
  EXPECT_TRUE(Accepts(g, "<v>\xC3\xA9\xE4\xB8\xAD\xC3\xA9</v>"));  // three characters, seven bytes
  EXPECT_FALSE(Prefix(g, "<v>abcd"));
  EXPECT_TRUE(Prefix(g, "<v>abc</"));
}

TEST(GrammarMatcherRawText, OverlappingStopPrefixesAreTracked) {
  GrammarBuilder b;
  const NodeId root = b.Seq({b.RawText({"abac"}), b.Literal("!")});
  Grammar g = std::move(b).Build(root);
  EXPECT_TRUE(Accepts(g, "ababab!"));
  EXPECT_FALSE(Prefix(g, "xababac"));  // KMP state falls back, then completes
  EXPECT_FALSE(Prefix(g, "abac"));
}

TEST(GrammarMatcherString, ForbiddenBytesNeverRaw) {
  GrammarBuilder b;
  b.set_string_forbidden("<");
  const NodeId root = b.String();
  Grammar g = std::move(b).Build(root);
  EXPECT_TRUE(Accepts(g, "\"a \\u003c b\""));
  EXPECT_FALSE(Prefix(g, "\"a <"));
  EXPECT_FALSE(GrammarMatcher::InUnboundedStringBody(g, GrammarMatcher(&g).state()));
  GrammarMatcher m(&g);
  ASSERT_TRUE(m.AdvanceBytes("\"ab"));
  EXPECT_FALSE(GrammarMatcher::InUnboundedStringBody(g, m.state()));  // no fast path past the check
}

}  // namespace
}  // namespace pg
