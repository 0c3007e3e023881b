// JsonStreamScanner: checks one JSON value a character at a time, as a model
// generates it, and completes any prefix it accepted into valid JSON.
//
// ToolCallStream streams a call's arguments through it: what the scanner
// takes is sent at once, whitespace between tokens is dropped, a raw control
// character inside a string is sent escaped (so the result parses), and the
// first character that cannot continue the value ends the arguments. If the
// value is not complete then (cut off by max_tokens, or broken), Completion()
// closes it: the open string, number or literal, a missing value (null), then
// every open object and array. The arguments a client assembles are
// therefore always valid JSON.
//
// Thread-safety: none; one scanner per value.
#pragma once

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
  Step Number(char c, std::string* out);
  Step Take(char c, std::string* out);  // appends c; kDone if the value just ended
  void EndValue();                      // a value inside (or at) the top ended
  bool NumberCanEnd() const;

  std::vector<char> open_;  // '{' / '[' of the enclosing containers, innermost last
  State state_ = State::kValue;
  bool key_ = false;        // kString: the string is an object key
  int escape_ = 0;          // kString: 0 none, 1 after '\', 2..5 inside \u (hex digits seen + 2)
  Num num_ = Num::kInt;
  std::string literal_rest_;  // kLiteral: what is left of true / false / null
};

}  // namespace pg
