#include "tokenizer/unicode.h"

#include <gtest/gtest.h>

namespace pg {
namespace {

TEST(Unicode, Categories) {
  EXPECT_EQ(CategoryOf('a'), UnicodeCategory::kLetter);
  EXPECT_EQ(CategoryOf('Z'), UnicodeCategory::kLetter);
  EXPECT_EQ(CategoryOf('7'), UnicodeCategory::kNumber);
  EXPECT_EQ(CategoryOf('!'), UnicodeCategory::kPunctuation);
  EXPECT_EQ(CategoryOf('$'), UnicodeCategory::kSymbol);
  EXPECT_EQ(CategoryOf(' '), UnicodeCategory::kSeparator);
  EXPECT_EQ(CategoryOf('\n'), UnicodeCategory::kControl);
  EXPECT_EQ(CategoryOf(0x00E9), UnicodeCategory::kLetter);       // é
  EXPECT_EQ(CategoryOf(0x00BD), UnicodeCategory::kNumber);       // ½
  EXPECT_EQ(CategoryOf(0x0301), UnicodeCategory::kMark);         // combining acute
  EXPECT_EQ(CategoryOf(0x6771), UnicodeCategory::kLetter);       // 東
  EXPECT_EQ(CategoryOf(0x3002), UnicodeCategory::kPunctuation);  // 。
  EXPECT_EQ(CategoryOf(0x1F680), UnicodeCategory::kSymbol);      // 🚀 (above the BMP)
  EXPECT_EQ(CategoryOf(0x1D7CE), UnicodeCategory::kNumber);      // mathematical bold digit zero
  EXPECT_EQ(CategoryOf(0x20000), UnicodeCategory::kLetter);      // CJK extension B
  EXPECT_EQ(CategoryOf(0x0378), UnicodeCategory::kUndefined);    // unassigned
  EXPECT_EQ(CategoryOf(0xE000), UnicodeCategory::kControl);      // private use
  EXPECT_EQ(CategoryOf(0x10FFFF), UnicodeCategory::kUndefined);
  EXPECT_EQ(CategoryOf(0x110000), UnicodeCategory::kUndefined);
  EXPECT_EQ(CategoryOf(0xFFFFFFFF), UnicodeCategory::kUndefined);
}

TEST(Unicode, Whitespace) {
  for (uint32_t c : {0x09u, 0x0Au, 0x0Bu, 0x0Cu, 0x0Du, 0x20u, 0x85u, 0xA0u, 0x2003u, 0x3000u}) {
    EXPECT_TRUE(IsWhitespace(c)) << c;
  }
  for (uint32_t c : {0x1Cu, 0x61u, 0x200Bu, 0x2581u}) EXPECT_FALSE(IsWhitespace(c)) << c;
}

TEST(Unicode, DecodeUtf8ReplacesEachBadByte) {
  EXPECT_EQ(DecodeUtf8("a\xC3\xA9\xE6\x9D\xB1\xF0\x9F\x9A\x80"), (std::vector<uint32_t>{'a', 0xE9, 0x6771, 0x1F680}));
  // Stray continuation, truncated sequence, invalid lead byte.
  EXPECT_EQ(DecodeUtf8("\x80"), (std::vector<uint32_t>{0xFFFD}));
  EXPECT_EQ(DecodeUtf8("\xE6\x9D"), (std::vector<uint32_t>{0xFFFD, 0xFFFD}));
  EXPECT_EQ(DecodeUtf8("\xFFx"), (std::vector<uint32_t>{0xFFFD, 'x'}));
  EXPECT_TRUE(DecodeUtf8("").empty());
}

TEST(Unicode, Utf8RoundTrip) {
  for (uint32_t cp : {0x0u, 0x7Fu, 0x80u, 0x7FFu, 0x800u, 0xFFFFu, 0x10000u, 0x10FFFFu}) {
    std::string s;
    AppendUtf8(cp, &s);
    EXPECT_EQ(DecodeUtf8(s), std::vector<uint32_t>{cp});
    EXPECT_EQ(s.size(), Utf8SeqLen(static_cast<uint8_t>(s[0])));
  }
}

TEST(Unicode, ByteMapIsABijection) {
  std::vector<bool> seen(512, false);
  for (int b = 0; b < 256; ++b) {
    const std::string& t = ByteToUnicode(static_cast<uint8_t>(b));
    const auto cps = DecodeUtf8(t);
    ASSERT_EQ(cps.size(), 1u);
    EXPECT_FALSE(seen[cps[0]]);
    seen[cps[0]] = true;
    EXPECT_EQ(UnicodeToByte(cps[0]), b);
  }
  EXPECT_EQ(ByteToUnicode(' '), "\xC4\xA0");   // Ġ
  EXPECT_EQ(ByteToUnicode('\n'), "\xC4\x8A");  // Ċ
  EXPECT_EQ(ByteToUnicode('a'), "a");
  EXPECT_EQ(UnicodeToByte(0x2581), -1);
}

}  // namespace
}  // namespace pg
