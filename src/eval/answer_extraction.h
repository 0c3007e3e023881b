// Answer extraction: pulls the final number out of a model's completion and
// out of a GSM8K reference answer, and compares the two numerically.
//
// The rule (also in docs/quality.md):
//  1. The completion is cut at the first "\nQuestion:" (a model that keeps
//     imitating the few-shot format starts a new problem there).
//  2. If it contains "The answer is" (any case), the answer is the FIRST
//     number after the LAST such phrase.
//  3. Otherwise (or if no number follows the phrase) the answer is the LAST
//     number anywhere in the (cut) completion.
//  4. No number at all: no answer (graded wrong, reported as "no_answer").
// What counts as a number:
//  - digits, optionally with thousands separators: "1,234,567" (a comma must be
//    followed by exactly three digits; "12,34" is two numbers, 12 and 34);
//  - an optional decimal part ".5"; a trailing "." ends the number ("42." is 42);
//  - an optional sign: "-" (or U+2212 "−") directly before the digits or
//    before "$", when not preceded by a letter, digit or ")" ("5-3" is 5 and 3);
//  - "$" before the digits and "%" or units after ("15 dollars", "3km", "50%")
//    are ignored: "50%" is 50, matching GSM8K references;
//  - a simple fraction "a/b" of two integers with no spaces is one number of
//    value a/b ("3/4" is 0.75); "a/0" is just a;
//  - digits glued to a preceding letter or "_" are part of a word, not a number
//    ("mp3", "COVID19", "x2"); letters after digits are a unit ("2nd" is 2).
// Values are compared as doubles with a relative tolerance of 1e-9, so "3.00",
// "3" and "3.0" are equal and "1,234.50" equals "1234.5".
//
// Thread-safety: pure functions.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace pg {

// One number found in text.
struct ExtractedNumber {
  std::string text;  // canonical form: no separators, no trailing zeros ("-1234.5", "3/4")
  double value = 0;
};

enum class ExtractionRule {
  kAnswerPhrase,  // first number after the last "The answer is"
  kLastNumber,    // fallback: last number in the text
};
const char* ExtractionRuleName(ExtractionRule rule);

struct Extraction {
  ExtractedNumber number;
  ExtractionRule rule = ExtractionRule::kLastNumber;
};

// Every number in text, in order of appearance, per the rules above.
std::vector<ExtractedNumber> FindNumbers(std::string_view text);

// The model's final answer, or nullopt when the completion holds no number.
std::optional<Extraction> ExtractAnswer(std::string_view completion);

// The number after the last "####" of a GSM8K answer field, or nullopt when
// there is no "####" or no number follows it.
std::optional<ExtractedNumber> ParseReferenceAnswer(std::string_view gsm8k_answer);

// Numeric equality with a relative tolerance of 1e-9 (absolute near zero).
bool AnswersEqual(double a, double b);

}  // namespace pg
