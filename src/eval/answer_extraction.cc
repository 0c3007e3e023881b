#include "eval/answer_extraction.h"

#include <algorithm>
#include <cmath>
#include <cstdlib>

#include "base/enum_names.h"

namespace pg {
namespace {

bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
bool IsWordChar(char c) { return IsDigit(c) || IsAsciiLetter(c) || c == '_'; }

constexpr std::string_view kUnicodeMinus = "\xE2\x88\x92";  // U+2212

char Lower(char c) { return (c >= 'A' && c <= 'Z') ? static_cast<char>(c - 'A' + 'a') : c; }

// Position of the last case-insensitive occurrence of needle (lowercase), or npos.
size_t FindLastNoCase(std::string_view hay, std::string_view needle) {
  if (needle.size() > hay.size()) return std::string_view::npos;
  for (size_t i = hay.size() - needle.size() + 1; i-- > 0;) {
    bool match = true;
    for (size_t k = 0; k < needle.size(); ++k) {
      if (Lower(hay[i + k]) != needle[k]) {
        match = false;
        break;
      }
    }
    if (match) return i;
  }
  return std::string_view::npos;
}

// Digit run [pos, end) of text starting at pos.
size_t DigitRunEnd(std::string_view text, size_t pos) {
  while (pos < text.size() && IsDigit(text[pos])) ++pos;
  return pos;
}

// Strips trailing zeros of a decimal part, and the "." if nothing remains.
std::string CanonicalDecimal(std::string digits) {
  // Leading zeros of the integer part ("007" -> "7"; keep one before ".").
  size_t lead = 0;
  while (lead + 1 < digits.size() && digits[lead] == '0' && IsDigit(digits[lead + 1])) ++lead;
  digits.erase(0, lead);
  if (digits.find('.') != std::string::npos) {
    while (!digits.empty() && digits.back() == '0') digits.pop_back();
    if (!digits.empty() && digits.back() == '.') digits.pop_back();
  }
  if (digits.empty() || digits[0] == '.') digits.insert(digits.begin(), '0');
  return digits;
}

// Tries to read a number whose first digit (or "." of ".5") is at `start`.
// `negative` was decided by the caller. On success fills out and returns the
// position after the number; on failure returns start.
size_t ReadNumber(std::string_view text, size_t start, bool negative, ExtractedNumber* out) {
  std::string digits;  // integer part, then optional "." and decimals
  size_t pos = start;
  if (IsDigit(text[pos])) {
    size_t run_end = DigitRunEnd(text, pos);
    digits.append(text.substr(pos, run_end - pos));
    pos = run_end;
    // Thousands groups: only after a first group of 1-3 digits.
    if (run_end - start <= 3) {
      while (pos < text.size() && text[pos] == ',' && DigitRunEnd(text, pos + 1) == pos + 4) {
        digits.append(text.substr(pos + 1, 3));
        pos += 4;
      }
    }
  }
  bool has_decimal = false;
  if (pos + 1 < text.size() && text[pos] == '.' && IsDigit(text[pos + 1])) {
    size_t run_end = DigitRunEnd(text, pos + 1);
    digits.append(text.substr(pos, run_end - pos));
    pos = run_end;
    has_decimal = true;
  }
  if (digits.empty()) return start;

  std::string canonical = CanonicalDecimal(digits);
  double value = std::strtod(canonical.c_str(), nullptr);

  // Simple fraction "a/b" of two integers.
  if (!has_decimal && pos + 1 < text.size() && text[pos] == '/' && IsDigit(text[pos + 1])) {
    size_t den_end = DigitRunEnd(text, pos + 1);
    bool glued_decimal = den_end + 1 < text.size() && text[den_end] == '.' && IsDigit(text[den_end + 1]);
    std::string den = CanonicalDecimal(std::string(text.substr(pos + 1, den_end - pos - 1)));
    double den_value = std::strtod(den.c_str(), nullptr);
    if (!glued_decimal && den_value != 0) {
      canonical += "/" + den;
      value /= den_value;
      pos = den_end;
    }
  }

  if (value == 0) negative = false;  // "-0" is 0
  out->text = negative ? "-" + canonical : canonical;
  out->value = negative ? -value : value;
  return pos;
}

constexpr const char* kRuleNames[] = {"answer_phrase", "last_number"};  // by ExtractionRule

}  // namespace

const char* ExtractionRuleName(ExtractionRule rule) { return EnumName(rule, kRuleNames); }

std::vector<ExtractedNumber> FindNumbers(std::string_view text) {
  std::vector<ExtractedNumber> numbers;
  size_t i = 0;
  while (i < text.size()) {
    char c = text[i];
    bool starts_digits = IsDigit(c) || (c == '.' && i + 1 < text.size() && IsDigit(text[i + 1]));
    if (!starts_digits) {
      ++i;
      continue;
    }
    // Glued to a word ("mp3", "x2", "v1.5"): skip the whole word.
    if (i > 0 && IsWordChar(text[i - 1])) {
      while (i < text.size() && (IsWordChar(text[i]) || text[i] == '.' || text[i] == ',') &&
             !(text[i] == '.' && (i + 1 >= text.size() || !IsDigit(text[i + 1]))) &&
             !(text[i] == ',' && (i + 1 >= text.size() || !IsDigit(text[i + 1])))) {
        ++i;
      }
      continue;
    }
    // Sign: walk back over an optional "$" to a "-" or U+2212.
    bool negative = false;
    size_t sign_at = i;
    if (sign_at > 0 && text[sign_at - 1] == '$') --sign_at;
    size_t sign_len = 0;
    if (sign_at > 0 && text[sign_at - 1] == '-') {
      sign_len = 1;
    } else if (sign_at >= kUnicodeMinus.size() &&
               text.substr(sign_at - kUnicodeMinus.size(), kUnicodeMinus.size()) == kUnicodeMinus) {
      sign_len = kUnicodeMinus.size();
    }
    if (sign_len > 0) {
      size_t before = sign_at - sign_len;
      negative = before == 0 || !(IsWordChar(text[before - 1]) || text[before - 1] == ')');
    }
    ExtractedNumber number;
    size_t end = ReadNumber(text, i, negative, &number);
    if (end == i) {
      ++i;
      continue;
    }
    numbers.push_back(std::move(number));
    i = end;
    // Digits glued after a number's end belong to nothing useful ("12abc34"):
    // the letters form a unit word; skip the word so its digits are not read.
    if (i < text.size() && IsAsciiLetter(text[i])) {
      while (i < text.size() && IsWordChar(text[i])) ++i;
    }
  }
  return numbers;
}

std::optional<Extraction> ExtractAnswer(std::string_view completion) {
  size_t cut = completion.find("\nQuestion:");
  if (cut != std::string_view::npos) completion = completion.substr(0, cut);

  constexpr std::string_view kPhrase = "the answer is";
  size_t phrase = FindLastNoCase(completion, kPhrase);
  if (phrase != std::string_view::npos) {
    std::vector<ExtractedNumber> after = FindNumbers(completion.substr(phrase + kPhrase.size()));
    if (!after.empty()) return Extraction{std::move(after.front()), ExtractionRule::kAnswerPhrase};
  }
  std::vector<ExtractedNumber> all = FindNumbers(completion);
  if (all.empty()) return std::nullopt;
  return Extraction{std::move(all.back()), ExtractionRule::kLastNumber};
}

std::optional<ExtractedNumber> ParseReferenceAnswer(std::string_view gsm8k_answer) {
  size_t marker = gsm8k_answer.rfind("####");
  if (marker == std::string_view::npos) return std::nullopt;
  std::vector<ExtractedNumber> after = FindNumbers(gsm8k_answer.substr(marker + 4));
  if (after.empty()) return std::nullopt;
  return std::move(after.front());
}

bool AnswersEqual(double a, double b) {
  if (!std::isfinite(a) || !std::isfinite(b)) return false;
  double scale = std::max({1.0, std::fabs(a), std::fabs(b)});
  return std::fabs(a - b) <= 1e-9 * scale;
}

}  // namespace pg
