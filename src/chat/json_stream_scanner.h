// JsonStreamScanner: checks one JSON value a character at a time, as a model
// generates it, and completes any prefix it accepted into valid JSON.
//
// ToolCallStream streams a call's arguments through it: what the scanner
// takes is sent at once, whitespace between tokens is dropped, a raw control
// character inside a string is sent escaped (so the result parses), and the
// first character that cannot continue the value ends the arguments. If the
// value is not complete then (cut off by max_tokens, or broken), Completion()
// closes it: the open string, number or literal, a missing value (null), then
// every open object and array. Inside strings, escapes are held until
// complete, a lone surrogate escape becomes \ufffd and invalid UTF-8 becomes
// U+FFFD. A number stops before the digit that would overflow a double. Nesting deeper than kDefaultMaxJsonDepth
// (base/bounded_json.h) cannot continue the value either. The arguments a client assembles are therefore always valid
// JSON that a bounded parse accepts.
//
// Thread-safety: none; one scanner per value.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace pg {

class JsonStreamScanner {
 public:
  enum class Step {
    kTake,    // c belongs to the value; it (or its escaped form) was appended to *out
    kSkip,    // whitespace between tokens; nothing appended
    kDone,    // c completed the value (and was appended)
    kBroken,  // c cannot come here; nothing appended, the scanner is unchanged
  };
  Step Push(char c, std::string* out);

  bool done() const { return state_ == State::kDone; }
  // Appended to everything taken, makes a valid JSON value ("" when done()).
  std::string Completion() const;

 private:
  enum class State { kValue, kValueOrEnd, kKeyOrEnd, kKey, kColon, kCommaOrEnd, kString, kNumber, kLiteral, kDone };
  enum class Num { kSign, kZero, kInt, kDot, kFrac, kExp, kExpSign, kExpInt };

  Step Value(char c, std::string* out);
  Step String(char c, std::string* out);
  Step Escape(char c, std::string* out);
  void StartUtf8(unsigned char u, std::string* out);  // a non-ASCII byte starts a character (base/utf8.h)
  void FlushHigh(std::string* out);                   // a high surrogate with no low half: U+FFFD
  Step Number(char c, std::string* out);
  Step Take(char c, std::string* out);   // appends c; kDone if the value just ended
  void EndValue();                       // a value inside (or at) the top ended
  Step Close(char c, std::string* out);  // c closes the innermost array or object
  bool NumberCanEnd() const;
  bool Overflows(int64_t int_digits, int64_t exp) const;

  std::vector<char> open_;  // '{' / '[' of the enclosing containers, innermost last
  State state_ = State::kValue;
  bool key_ = false;                               // kString: the string is an object key
  int escape_ = 0;                                 // kString: 0 none, 1 after '\', 2..5 inside \u (hex digits seen + 2)
  std::string esc_;                                // kString: the escape being read (held until complete)
  std::string high_;                               // kString: a \uD800-\uDBFF escape held until its low half
  std::string utf8_;                               // kString: an incomplete UTF-8 character (held)
  int utf8_need_ = 0;                              // continuation bytes still missing from utf8_
  unsigned char utf8_lo_ = 0x80, utf8_hi_ = 0xBF;  // the range of the next one
  Num num_ = Num::kInt;
  // Magnitude of the number being read: digits before the point (after a
  // leading zero: none) and the exponent so far. A digit that would take it
  // past what a double holds (a JSON parser refuses 1e400) cannot continue it.
  int64_t int_digits_ = 0;
  int64_t exp_value_ = 0;
  bool exp_negative_ = false;
  std::string literal_rest_;  // kLiteral: what is left of true / false / null
};

}  // namespace pg
