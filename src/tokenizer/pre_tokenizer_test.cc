// Pre-tokenizer splits on tricky strings, for the kinds the vocab fixtures do
// not cover. Each expected split was worked out by hand from the regex list
// llama.cpp runs for that kind (quoted beside each test), reading the regex
// as ECMAScript does: leftmost alternative first, greedy with backtracking,
// unmatched code points kept together as one gap piece. Where llama.cpp reads
// a class differently from the tokenizer.json it came from (\p{Lu} as \p{L},
// ASCII '~' in neither \p{P} nor \p{S}), the expectation follows llama.cpp.
#include "tokenizer/pre_tokenizer.h"

#include <gtest/gtest.h>

#include "tokenizer/pre_tokenizer_test_util.h"

namespace pg {
namespace {

using K = PreTokenizerKind;

std::vector<std::string> Split(K kind, const std::string& text) { return testing::PreTokenizedWords(kind, text); }

// "a|b|c" -> {"a", "b", "c"} (for texts without '|').
std::vector<std::string> Bars(const std::string& s) {
  std::vector<std::string> out(1);
  for (char ch : s) {
    if (ch == '|') {
      out.emplace_back();
    } else {
      out.back() += ch;
    }
  }
  return out;
}

// starcoder, refact, command-r, ...: \p{N} then
// 's|'t|'re|'ve|'m|'ll|'d| ?\p{L}+| ?\p{N}+| ?[^\s\p{L}\p{N}]+|\s+(?!\S)
TEST(PreTokenizerSplit, StarcoderIsolatesEveryDigit) {
  // The first regex cuts each digit out, so the space before 2024 is left
  // alone at the end of "x " and GPT-2's \s+ takes it.
  EXPECT_EQ(Split(K::kStarcoder, "x 2024 it's"), Bars("x| |2|0|2|4| it|'s"));
  // \s+(?!\S) leaves the last whitespace code point for the next match.
  EXPECT_EQ(Split(K::kStarcoder, "  \n\tfoo"), Bars("  \n|\t|foo"));
}

// jais-2: Llama 3 with \s{512}(?!\S)|...|\s{4}(?!\S)|\s{1,2}(?!\S)|\s{1}
TEST(PreTokenizerSplit, Jais2CutsSpaceRunsAtPowersOfTwo) {
  // 12 spaces: \s{8}(?!\S) (a space follows), then \s{1,2}(?!\S) takes 2,
  // then 1, and [^\r\n\p{L}\p{N}]?\p{L}+ takes " b".
  EXPECT_EQ(Split(K::kJais2, "a            b"), Bars("a|        |  | | b"));
  // At the end of the text (?!\S) holds: 4 spaces, then 5 = 4 + 1.
  EXPECT_EQ(Split(K::kJais2, "a    "), Bars("a|    "));
  EXPECT_EQ(Split(K::kJais2, "a     "), Bars("a|    | "));
  // Llama 3 keeps the run whole but for the last space.
  EXPECT_EQ(Split(K::kLlama3, "a            b"), Bars("a|           | b"));
}

// qwen35: [^\r\n\p{L}\p{N}]?[\p{L}\p{M}]+|\p{N}| ?[^\s\p{L}\p{M}\p{N}]+[\r\n]*...
TEST(PreTokenizerSplit, Qwen35KeepsCombiningMarksInWords) {
  const std::string word = "e\xCC\x81te";  // e, U+0301 (combining acute), t, e
  EXPECT_EQ(Split(K::kQwen35, word), (std::vector<std::string>{word}));
  // Qwen2's \p{L}+ stops at the mark; the mark then leads "te".
  EXPECT_EQ(Split(K::kQwen2, word), (std::vector<std::string>{"e", "\xCC\x81te"}));
  EXPECT_EQ(Split(K::kQwen35, "x 2024"), Bars("x| |2|0|2|4"));
}

// seed-coder: ... ?[^\s\p{L}\p{N}\r\n]+|\s*[\r\n]+ ... (no [\r\n]* tail)
TEST(PreTokenizerSplit, SeedCoderLeavesNewlinesOffPunctuation) {
  EXPECT_EQ(Split(K::kSeedCoder, "a.\n\nb"), Bars("a|.|\n\n|b"));
  EXPECT_EQ(Split(K::kQwen2, "a.\n\nb"), Bars("a|.\n\n|b"));
}

// ufakzeka: Qwen2 without (?i:'s|'t|...): Turkish suffixes stay whole.
TEST(PreTokenizerSplit, UfakzekaHasNoContractions) {
  EXPECT_EQ(Split(K::kUfakzeka, "T\xC3\xBCrkiye'de we'llx"), Bars("T\xC3\xBCrkiye|'de| we|'llx"));
  EXPECT_EQ(Split(K::kQwen2, "T\xC3\xBCrkiye'de we'llx"), Bars("T\xC3\xBCrkiye|'d|e| we|'ll|x"));
}

// laguna: [^\n]+|[\n]+, then Qwen2's regex on each line.
TEST(PreTokenizerSplit, LagunaSplitsLinesFirst) {
  // Qwen2 alone: \s*[\r\n]+ takes " \n" and the space before b leads it.
  EXPECT_EQ(Split(K::kQwen2, "a \n b"), Bars("a| \n| b"));
  EXPECT_EQ(Split(K::kLaguna, "a \n b"), Bars("a| |\n| b"));
  EXPECT_EQ(Split(K::kLaguna, "ab\n\ncd 12"), Bars("ab|\n\n|cd| |1|2"));
}

// minicpm5: \p{N}{1,3}, then Llama 3 with \p{N}+: the same words as Llama 3.
TEST(PreTokenizerSplit, MiniCpm5GroupsDigitsByThree) {
  const char* texts[] = {"1234567 x12345", "Hello world, it's  ok\n\n  x", " 12 345\t6"};
  EXPECT_EQ(Split(K::kMiniCpm5, texts[0]), Bars("123|456|7| x|123|45"));
  for (const char* t : texts) EXPECT_EQ(Split(K::kMiniCpm5, t), Split(K::kLlama3, t)) << t;
}

// deepseek-v3: \p{N}{1,3} ; [一-龥぀-ゟ゠-ヿ]+ ;
// [!-/:-@[-`{-~][A-Za-z]+|[^\r\n\p{L}\p{P}\p{S}]?[\p{L}\p{M}]+| ?[\p{P}\p{S}]+[\r\n]*
// |\s*[\r\n]+|\s+(?!\S)|\s+
TEST(PreTokenizerSplit, DeepseekV3) {
  // Digits and kana/ideographs are cut out first; a lone digit group matches
  // nothing in the last regex and stays a gap; ".net" is punct + letters.
  EXPECT_EQ(Split(K::kDeepseekV3,
                  "Hello, \xE4\xB8\x96\xE7\x95\x8C! 12345 "
                  "\xE3\x81\x82\xE3\x82\x8A\xE3\x81\x8C\xE3\x81\xA8\xE3\x81\x86.net"),
            Bars("Hello|,| |\xE4\xB8\x96\xE7\x95\x8C|!| |123|45| |"
                 "\xE3\x81\x82\xE3\x82\x8A\xE3\x81\x8C\xE3\x81\xA8\xE3\x81\x86|.net"));
  EXPECT_EQ(Split(K::kDeepseekV3, "don't x.\n\n y"), Bars("don|'t| x|.\n\n| y"));
  // '~' is ASCII punctuation for the first alternative but in neither of
  // llama.cpp's ASCII \p{P} / \p{S} lists: "~" alone is a gap.
  EXPECT_EQ(Split(K::kDeepseekV3, "a~~b"), Bars("a|~|~b"));
}

// spark2_5: as deepseek-v3 but  ?[\p{P}\p{S}]+|[\r\n]|... and a last \p{N}.
TEST(PreTokenizerSplit, Spark25) {
  EXPECT_EQ(Split(K::kSpark25, "x.\n\n y"), Bars("x|.|\n|\n| y"));
  EXPECT_EQ(Split(K::kSpark25, "v 12345"), Bars("v| |1|2|3|4|5"));
}

// afmoe: llama.cpp's custom digit scanner ; [CJK, kana, Hangul, Thai, ...]+ ;
// deepseek-v3's last regex.
TEST(PreTokenizerSplit, Afmoe) {
  // 5 digits: a leading group of 2, then 3.
  EXPECT_EQ(Split(K::kAfmoe, "abc12345 x"), Bars("abc|12|345| x"));
  // Hangul is cut out before the word regex, so the space is not a lead.
  EXPECT_EQ(Split(K::kAfmoe, "\xEC\x95\x88\xEB\x85\x95 \xEC\x84\xB8"), Bars("\xEC\x95\x88\xEB\x85\x95| |\xEC\x84\xB8"));
  EXPECT_EQ(Split(K::kDeepseekV3, "\xEC\x95\x88\xEB\x85\x95 \xEC\x84\xB8"),
            Bars("\xEC\x95\x88\xEB\x85\x95| \xEC\x84\xB8"));
  // llama.cpp's scanner leaves the text before a digit run in the run's
  // first piece ("a  12"), so the word regex sees "a  " before a digit.
  EXPECT_EQ(Split(K::kAfmoe, "a  12"), Bars("a| | |12"));
}

// gpt-4o, llama4, minimax-m2, ...:
// [^\r\n\p{L}\p{N}]?UPPER*LOWER+C?|[^\r\n\p{L}\p{N}]?UPPER+LOWER*C?|\p{N}{1,3}
// | ?[^\s\p{L}\p{N}]+[\r\n/]*|\s*[\r\n]+|\s+(?!\S)|\s+
// with UPPER = (?=\p{L})[^a-z], LOWER = (?=\p{L})[^A-Z] as llama.cpp writes them.
TEST(PreTokenizerSplit, Gpt4oSplitsAtCaseChanges) {
  EXPECT_EQ(Split(K::kGpt4o, "HelloWorld HTTPServer iPhone's DON'T 12345"),
            Bars("Hello|World| HTTPServer| i|Phone's| DON'T| |123|45"));
  // A non-ASCII letter is both UPPER and LOWER: in "ÉCOLE" UPPER* gives back
  // everything and LOWER+ takes only É; "école" is one word.
  EXPECT_EQ(Split(K::kGpt4o,
                  "\xC3\x89"
                  "COLE \xC3\xA9"
                  "cole"),
            Bars("\xC3\x89|COLE| \xC3\xA9"
                 "cole"));
  EXPECT_EQ(Split(K::kGpt4o, "x //\n\ny"), Bars("x| //\n\n|y"));
}

// tekken: the GPT-4o shape without contractions and with \p{N}.
TEST(PreTokenizerSplit, Tekken) {
  EXPECT_EQ(Split(K::kTekken, "HelloWorld it's 123"), Bars("Hello|World| it|'s| |1|2|3"));
}

// granite-embed-multi-97m: the letter test is [\p{L}\p{M}].
TEST(PreTokenizerSplit, GraniteEmbMultiJoinsMarks) {
  const std::string word = "e\xCC\x81te";
  EXPECT_EQ(Split(K::kGraniteEmbMulti, word), (std::vector<std::string>{word}));
  EXPECT_EQ(Split(K::kGpt4o, word), (std::vector<std::string>{"e", "\xCC\x81te"}));
}

// youtu: [가-힣ㄱ-ㆎ]+|[！…“”‘’—：；，、-〿︰-﹏]+|[ㄅ-ㄯ]+|[一-龥぀-ゟ゠-ヿ]+ ; then
// the GPT-4o shape with \p{N}, where llama.cpp reads \p{Lu}.. as \p{L} (no case split).
TEST(PreTokenizerSplit, Youtu) {
  EXPECT_EQ(Split(K::kYoutu, "\xEC\x95\x88\xEB\x85\x95\xEF\xBC\x81\xE4\xBD\xA0\xE5\xA5\xBD HelloWorld it's 42"),
            Bars("\xEC\x95\x88\xEB\x85\x95|\xEF\xBC\x81|\xE4\xBD\xA0\xE5\xA5\xBD| HelloWorld| it's| |4|2"));
}

// tiny_aya: \d{1,3}(?=(?:\d{3})*\b) ; then as youtu with \p{N}{1,3}.
TEST(PreTokenizerSplit, TinyAyaGroupsDigitsFromTheRight) {
  EXPECT_EQ(Split(K::kTinyAya, "1234567 abc12345 x_123 9"), Bars("1|234|567| abc|12|345| x|_|123| |9"));
  // No word boundary after the run: the first regex does not match, and the
  // second groups from the left.
  EXPECT_EQ(Split(K::kTinyAya, "12345abc"), Bars("123|45|abc"));
}

// kimi-k2: \p{Han}+|[^\r\n\p{L}\p{N}]?[letters but Han]+C?|\p{N}{1,3}| ?[^\s\p{L}\p{N}]+[\r\n]*...
TEST(PreTokenizerSplit, KimiK2KeepsHanApart) {
  EXPECT_EQ(Split(K::kKimiK2,
                  "Hello\xE4\xB8\x96\xE7\x95\x8C it's \xE4\xB8\xAD\xE6\x96\x87"
                  "abc 12345"),
            Bars("Hello|\xE4\xB8\x96\xE7\x95\x8C| it's| |\xE4\xB8\xAD\xE6\x96\x87|abc| |123|45"));
}

// exaone-moe: (?i:'s|...)|[^\r\n\p{L}\p{N}]?(?:\p{L}\p{M}*(?: \p{L}\p{M}*)*)+|\p{N}
// | ?[^\s\p{L}\p{N}]+[\r\n/]?|\s*[\r\n]|\s+(?!\S)|\s+
TEST(PreTokenizerSplit, ExaoneMoeGluesWordsAcrossSingleSpaces) {
  EXPECT_EQ(Split(K::kExaoneMoe, "Hello big world, it's 42/x"), Bars("Hello big world|,| it|'s| |4|2|/x"));
  EXPECT_EQ(Split(K::kExaoneMoe, "a.\n\nb  c"), Bars("a|.\n|\n|b| | c"));
}

// poro-chat, bloom, gpt3-finnish:  ?[^(\s|.,!?…。，、।۔،)]+ ; viking adds \p{N}.
TEST(PreTokenizerSplit, PoroSplitsAtSpacesAndSentencePunctuation) {
  EXPECT_EQ(Split(K::kPoro,
                  "Hello, world! (test) a|b  c\xE2\x80\xA6"
                  "d"),
            (std::vector<std::string>{"Hello", ",", " world", "! (", "test", ")", " a", "|", "b", " ", " c",
                                      "\xE2\x80\xA6", "d"}));
  EXPECT_EQ(Split(K::kPoro, "abc123"), Bars("abc123"));
  EXPECT_EQ(Split(K::kViking, "abc123"), Bars("abc|1|2|3"));
}

// superbpe: \p{N}+ ; (?=(\d{3})+(?!\d)) (empty matches cut digit runs).
TEST(PreTokenizerSplit, SuperBpeCutsOnlyDigits) {
  EXPECT_EQ(Split(K::kSuperBpe, "I have 1234567 apples, it's 12"), Bars("I have |1|234|567| apples, it's |12"));
  EXPECT_EQ(Split(K::kSuperBpe, "123456"), Bars("123|456"));
}

// chameleon: <sentinel:[0-9]+> ; (IMGIMG)((A|B|C|D|E|F|G|H|I){1,4})Z ;
// ([\t\n]|    |  ) ; \p{N} ; [\p{P}!-/:-@\[-`{-~] ; GPT-2's regex.
TEST(PreTokenizerSplit, Chameleon) {
  // Later regexes split every piece again: the sentinel loses its digits
  // and punctuation; the image token is cut from "a" and GPT-2 keeps its
  // letters. 5 letters are too many for {1,4}: " IMGIMGABCDEZ" is a word.
  // Each punctuation code point is its own piece; 5 spaces give "    " and
  // a gap " " that leads "w".
  EXPECT_EQ(Split(K::kChameleon, "aIMGIMGABZ<sentinel:12> IMGIMGABCDEZ"),
            Bars("a|IMGIMGABZ|<|sentinel|:|1|2|>| IMGIMGABCDEZ"));
  EXPECT_EQ(Split(K::kChameleon, "x,.y 12\t\tz     w"), Bars("x|,|.|y| |1|2|\t|\t|z|    | w"));
}

// Every kind keeps the text: pieces are non-empty and sum to its length,
// including on invalid UTF-8, controls, emoji and lone marks.
TEST(PreTokenizerSplit, EveryKindCoversTheText) {
  const std::string texts[] = {
      "",
      " ",
      "\n",
      "\xF0\x9F\x9A\x80\xF0\x9F\x94\xA5 emoji \xE2\x80\x94 \xC2\xABquotes\xC2\xBB",
      std::string("nul\0byte\x01\x7F", 10),
      "\xFF\xFE bad utf8 \xC3",
      "\xCC\x81\xCC\x81 marks first",
      "tabs\tand\r\nCRLF\r\n\r\n   \t",
      "Grüße aus München! 東京は晴れです。",
  };
  for (int k = 0; k <= static_cast<int>(K::kChameleon); ++k) {
    for (const std::string& t : texts) {
      const auto cpts = DecodeUtf8(t);
      size_t total = 0;
      for (size_t len : PreTokenize(static_cast<K>(k), cpts)) {
        EXPECT_GT(len, 0u) << "kind " << k;
        total += len;
      }
      EXPECT_EQ(total, cpts.size()) << "kind " << k;
    }
  }
}

}  // namespace
}  // namespace pg
