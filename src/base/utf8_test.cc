#include "base/utf8.h"

#include <gtest/gtest.h>

#include <string>

namespace pg {
namespace {

TEST(Utf8, WellFormedAndNot) {
  EXPECT_TRUE(IsValidUtf8(""));
  EXPECT_TRUE(IsValidUtf8("plain ascii"));
  EXPECT_TRUE(IsValidUtf8("\xC3\xA9t\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80 \xF4\x8F\xBF\xBF"));  // é € 😀 U+10FFFF
  for (const char* bad : {"\x80", "\xC3", "\xC0\xAF", "\xC1\xBF", "\xE0\x80\xAF", "\xED\xA0\x80", "\xF0\x8F\xBF\xBF",
                          "\xF4\x90\x80\x80", "\xF5\x80\x80\x80", "\xFF", "ok\xE2\x82"}) {
    EXPECT_FALSE(IsValidUtf8(bad)) << "accepted: " << bad;
  }
}

TEST(Utf8, DecodesOneCharacterAtATime) {
  const std::string s = "a\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80";
  char32_t cp = 0;
  EXPECT_EQ(DecodeUtf8Char(s, 0, &cp), 1u);
  EXPECT_EQ(cp, U'a');
  EXPECT_EQ(DecodeUtf8Char(s, 1, &cp), 2u);
  EXPECT_EQ(cp, U'\u00E9');
  EXPECT_EQ(DecodeUtf8Char(s, 3, &cp), 3u);
  EXPECT_EQ(cp, U'\u20AC');
  EXPECT_EQ(DecodeUtf8Char(s, 6, &cp), 4u);
  EXPECT_EQ(cp, U'\U0001F600');
  EXPECT_EQ(DecodeUtf8Char(s, 2, &cp), 0u);  // a continuation byte
  EXPECT_EQ(DecodeUtf8Char(s, s.size(), &cp), 0u);
}

TEST(Utf8, LeadBytesNameTheirSecondByteRange) {
  EXPECT_EQ(Utf8LeadOf('x')->continuation, 0);
  EXPECT_EQ(Utf8LeadOf(0xC2)->continuation, 1);
  EXPECT_EQ(Utf8LeadOf(0xE0)->lo, 0xA0);  // no overlong 3-byte forms
  EXPECT_EQ(Utf8LeadOf(0xED)->hi, 0x9F);  // no surrogates
  EXPECT_EQ(Utf8LeadOf(0xF0)->lo, 0x90);
  EXPECT_EQ(Utf8LeadOf(0xF4)->hi, 0x8F);  // nothing past U+10FFFF
  for (int b : {0x80, 0xBF, 0xC0, 0xC1, 0xF5, 0xFF}) EXPECT_FALSE(Utf8LeadOf(static_cast<unsigned char>(b))) << b;
}

}  // namespace
}  // namespace pg
