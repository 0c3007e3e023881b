#include "eval/answer_extraction.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string>
#include <vector>

namespace pg {
namespace {

struct Case {
  const char* completion;
  const char* expected;  // canonical text, nullptr = no answer
  double value;
  ExtractionRule rule;
};

constexpr ExtractionRule kPhrase = ExtractionRule::kAnswerPhrase;
constexpr ExtractionRule kLast = ExtractionRule::kLastNumber;

const std::vector<Case>& Cases() {
  static const std::vector<Case> cases = {
      {"16 - 3 - 4 = 9 eggs, 9 * 2 = 18. The answer is 18.", "18", 18, kPhrase},
      {"The answer is: $1,234.50.", "1234.5", 1234.5, kPhrase},
      {"so the answer is -3", "-3", -3, kPhrase},
      {"THE ANSWER IS 42", "42", 42, kPhrase},
      {"The answer is 3.0", "3", 3, kPhrase},
      {"The answer is 7.00.", "7", 7, kPhrase},
      {"The answer is 0.25", "0.25", 0.25, kPhrase},
      {"The answer is .5", "0.5", 0.5, kPhrase},
      {"The answer is 1,000,000 dollars.", "1000000", 1e6, kPhrase},
      {"The answer is 15 dollars.", "15", 15, kPhrase},
      {"The answer is 3 km", "3", 3, kPhrase},
      {"The answer is 3km.", "3", 3, kPhrase},
      {"The answer is 25%.", "25", 25, kPhrase},
      {"The answer is $-5.", "-5", -5, kPhrase},
      {"The answer is -$5.", "-5", -5, kPhrase},
      {"The answer is \xE2\x88\x92"
       "8.",
       "-8", -8, kPhrase},  // U+2212 minus
      {"The answer is 3/4.", "3/4", 0.75, kPhrase},
      {"The answer is **70,000**", "70000", 70000, kPhrase},
      {"The answer is 5 + 3 = 8", "5", 5, kPhrase},  // first number after the phrase
      // The LAST "The answer is" wins.
      {"The answer is 10. Wait, I made a mistake. The answer is 12.", "12", 12, kPhrase},
      // Phrase with no number after it: last number of the whole text.
      {"She has 4 apples and 6 pears, 10 fruits. The answer is ten.", "10", 10, kLast},
      {"The answer is N.", nullptr, 0, kLast},
      // No phrase: last number.
      {"First 3 + 4 = 7, then 7 * 2 = 14", "14", 14, kLast},
      {"It costs $2,500 in total", "2500", 2500, kLast},
      {"Total: 48/2=24", "24", 24, kLast},
      {"5-3 leaves", "3", 3, kLast},  // subtraction, not a negative number
      {"a change of -12 degrees", "-12", -12, kLast},
      {"Temperature (-4) tomorrow", "-4", -4, kLast},
      // Numbers glued to words are not numbers.
      {"I used mp3 and COVID19 and x2", nullptr, 0, kLast},
      {"The answer is 7 according to step2", "7", 7, kPhrase},
      {"there are 4 items in v2", "4", 4, kLast},
      {"the 2nd answer", "2", 2, kLast},  // suffix letters are a unit
      // Thousands separators vs lists.
      {"values 12,34", "34", 34, kLast},
      {"1,2,3", "3", 3, kLast},
      {"It is 1234,567", "567", 567, kLast},
      {"The answer is 1,234", "1234", 1234, kPhrase},
      {"Leading zeros: The answer is 007.", "7", 7, kPhrase},
      {"The answer is -0", "0", 0, kPhrase},
      {"The answer is 5/0", "5", 5, kPhrase},
      {"no digits here at all", nullptr, 0, kLast},
      {"", nullptr, 0, kLast},
      // The few-shot format continued: cut at "\nQuestion:".
      {"So 9 left. The answer is 9.\nQuestion: Sam has 3 cats...\nAnswer: The answer is 3.", "9", 9, kPhrase},
      {"The answer is\n\n  42\n", "42", 42, kPhrase},
      {"Version 1.2.3 of the answer is 8", "8", 8, kPhrase},
  };
  return cases;
}

TEST(AnswerExtraction, TrickyCompletions) {
  ASSERT_GE(Cases().size(), 25u);
  for (const Case& c : Cases()) {
    SCOPED_TRACE(c.completion);
    std::optional<Extraction> got = ExtractAnswer(c.completion);
    if (c.expected == nullptr) {
      EXPECT_FALSE(got.has_value()) << "extracted " << got->number.text;
      continue;
    }
    ASSERT_TRUE(got.has_value());
    EXPECT_EQ(got->number.text, c.expected);
    EXPECT_TRUE(AnswersEqual(got->number.value, c.value)) << got->number.value;
    EXPECT_EQ(got->rule, c.rule) << ExtractionRuleName(got->rule);
  }
}

TEST(AnswerExtraction, FindNumbersInOrder) {
  std::vector<ExtractedNumber> n = FindNumbers("Pay $1,200.50 for 3 items, -4 and 2/3 of 9%.");
  ASSERT_EQ(n.size(), 5u);
  EXPECT_EQ(n[0].text, "1200.5");
  EXPECT_EQ(n[1].text, "3");
  EXPECT_EQ(n[2].text, "-4");
  EXPECT_EQ(n[3].text, "2/3");
  EXPECT_NEAR(n[3].value, 2.0 / 3.0, 1e-12);
  EXPECT_EQ(n[4].text, "9");
}

TEST(AnswerExtraction, ReferenceAnswers) {
  auto ref = ParseReferenceAnswer("Janet sells 16 - 3 - 4 = <<16-3-4=9>>9 duck eggs.\n#### 18");
  ASSERT_TRUE(ref.has_value());
  EXPECT_EQ(ref->text, "18");
  ref = ParseReferenceAnswer("x\n#### 1,000");
  ASSERT_TRUE(ref.has_value());
  EXPECT_EQ(ref->value, 1000);
  ref = ParseReferenceAnswer("loss\n#### -7.50");
  ASSERT_TRUE(ref.has_value());
  EXPECT_EQ(ref->text, "-7.5");
  // The last "####" counts.
  ref = ParseReferenceAnswer("#### 1\n#### 2");
  ASSERT_TRUE(ref.has_value());
  EXPECT_EQ(ref->text, "2");
  EXPECT_FALSE(ParseReferenceAnswer("no marker 5").has_value());
  EXPECT_FALSE(ParseReferenceAnswer("#### none").has_value());
}

TEST(AnswerExtraction, NumericEquality) {
  EXPECT_TRUE(AnswersEqual(3, 3.0));
  EXPECT_TRUE(AnswersEqual(1234.5, 1234.50));
  EXPECT_TRUE(AnswersEqual(0.1 + 0.2, 0.3));
  EXPECT_FALSE(AnswersEqual(3, 4));
  EXPECT_FALSE(AnswersEqual(-3, 3));
  EXPECT_FALSE(AnswersEqual(1000000, 1000001));
  EXPECT_FALSE(AnswersEqual(NAN, NAN));
  // Grading a GSM8K-style completion end to end.
  auto got = ExtractAnswer("He makes 9 * 2 = $18 every day.\nThe answer is $18.00.");
  auto ref = ParseReferenceAnswer("... #### 18");
  ASSERT_TRUE(got && ref);
  EXPECT_TRUE(AnswersEqual(got->number.value, ref->value));
}

// Property check on random text: no crash, canonical texts are clean, and
// re-extracting a canonical text gives back the same number.
TEST(AnswerExtraction, RandomTextRoundTrips) {
  const std::string alphabet[] = {"0",
                                  "1",
                                  "5",
                                  "9",
                                  ".",
                                  ",",
                                  "-",
                                  "$",
                                  "/",
                                  "%",
                                  "a",
                                  "Z",
                                  " ",
                                  "\n",
                                  "_",
                                  "(",
                                  ")",
                                  "\xE2\x88\x92",
                                  "The answer is ",
                                  "\nQuestion:",
                                  "000"};
  uint64_t state = 12345;
  auto next = [&]() {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>(state >> 33);
  };
  for (int iter = 0; iter < 20000; ++iter) {
    std::string text;
    int len = static_cast<int>(next() % 40);
    for (int k = 0; k < len; ++k) text += alphabet[next() % std::size(alphabet)];
    for (const ExtractedNumber& n : FindNumbers(text)) {
      SCOPED_TRACE(text);
      ASSERT_FALSE(n.text.empty());
      EXPECT_EQ(n.text.find_first_not_of("-0123456789./"), std::string::npos) << n.text;
      EXPECT_NE(n.text.back(), '.');
      std::vector<ExtractedNumber> again = FindNumbers(n.text);
      ASSERT_EQ(again.size(), 1u) << n.text;
      EXPECT_EQ(again[0].text, n.text);
      EXPECT_TRUE(AnswersEqual(again[0].value, n.value)) << n.text;
    }
    (void)ExtractAnswer(text);
  }
}

TEST(AnswerExtraction, HugeNumbersNeverMatch) {
  std::string huge = "The answer is 1" + std::string(400, '0');
  auto got = ExtractAnswer(huge);
  ASSERT_TRUE(got.has_value());
  EXPECT_FALSE(std::isfinite(got->number.value));
  EXPECT_FALSE(AnswersEqual(got->number.value, got->number.value));
}

}  // namespace
}  // namespace pg
