#include "chat/json_stream_scanner.h"

#include <algorithm>
#include <cctype>
#include <cstdio>

#include "base/bounded_json.h"
#include "base/utf8.h"

namespace pg {
namespace {

constexpr const char* kReplacement = "\xEF\xBF\xBD";  // U+FFFD

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

JsonStreamScanner::Step JsonStreamScanner::Push(char c, std::string* out) {
  switch (state_) {
    case State::kString: return String(c, out);
    case State::kNumber: return Number(c, out);
    case State::kLiteral:
      if (c != literal_rest_[0]) return Step::kBroken;
      literal_rest_.erase(0, 1);
      if (literal_rest_.empty()) EndValue();
      return Take(c, out);
    case State::kDone: return Step::kBroken;
    default: break;
  }
  if (IsSpace(c)) return Step::kSkip;
  switch (state_) {
    case State::kValue:
    case State::kValueOrEnd:
      if (c == ']' && state_ == State::kValueOrEnd) return Close(c, out);
      return Value(c, out);
    case State::kKeyOrEnd:
    case State::kKey:
      if (c == '}' && state_ == State::kKeyOrEnd) return Close(c, out);
      if (c != '"') return Step::kBroken;
      state_ = State::kString;
      key_ = true;
      return Take(c, out);
    case State::kColon:
      if (c != ':') return Step::kBroken;
      state_ = State::kValue;
      return Take(c, out);
    case State::kCommaOrEnd:
      if (c == ',') {
        state_ = open_.back() == '{' ? State::kKey : State::kValue;
        return Take(c, out);
      }
      if ((c == '}' && open_.back() == '{') || (c == ']' && open_.back() == '[')) return Close(c, out);
      return Step::kBroken;
    default: return Step::kBroken;
  }
}

JsonStreamScanner::Step JsonStreamScanner::Value(char c, std::string* out) {
  if (c == '{' || c == '[') {
    // Deeper than a bounded parse accepts: the arguments end here, as for
    // any other character that cannot continue the value.
    if (open_.size() >= static_cast<size_t>(kDefaultMaxJsonDepth)) return Step::kBroken;
    open_.push_back(c);
    state_ = c == '{' ? State::kKeyOrEnd : State::kValueOrEnd;
  } else if (c == '"') {
    state_ = State::kString;
    key_ = false;
    escape_ = 0;
  } else if (c == '-' || IsDigit(c)) {
    state_ = State::kNumber;
    num_ = c == '-' ? Num::kSign : c == '0' ? Num::kZero : Num::kInt;
    int_digits_ = num_ == Num::kInt ? 1 : 0;
    exp_value_ = 0;
    exp_negative_ = false;
  } else if (c == 't' || c == 'f' || c == 'n') {
    state_ = State::kLiteral;
    literal_rest_ = c == 't' ? "rue" : c == 'f' ? "alse" : "ull";
  } else {
    return Step::kBroken;
  }
  return Take(c, out);
}

JsonStreamScanner::Step JsonStreamScanner::String(char c, std::string* out) {
  const auto u = static_cast<unsigned char>(c);
  if (utf8_need_ > 0) {
    if (u >= utf8_lo_ && u <= utf8_hi_) {
      utf8_ += c;
      utf8_lo_ = 0x80;
      utf8_hi_ = 0xBF;
      if (--utf8_need_ == 0) {
        out->append(utf8_);
        utf8_.clear();
      }
      return Step::kTake;
    }
    out->append(kReplacement);  // a broken UTF-8 character
    utf8_.clear();
    utf8_need_ = 0;
  }
  if (escape_ > 0) return Escape(c, out);
  if (c == '\\') {
    escape_ = 1;
    esc_ = "\\";
    return Step::kTake;
  }
  FlushHigh(out);
  if (c == '"') {
    if (key_) {
      state_ = State::kColon;
    } else {
      EndValue();
    }
    return Take(c, out);
  }
  if (u < 0x20) {
    char esc[8];
    std::snprintf(esc, sizeof(esc), "\\u%04x", static_cast<unsigned>(u));
    out->append(esc);  // a raw control character would not parse
  } else if (u < 0x80) {
    out->push_back(c);
  } else {
    StartUtf8(u, out);
  }
  return Step::kTake;
}

JsonStreamScanner::Step JsonStreamScanner::Escape(char c, std::string* out) {
  if (escape_ == 1) {
    if (c == 'u') {
      escape_ = 2;
      esc_ += c;
      return Step::kTake;
    }
    if (c != '"' && c != '\\' && c != '/' && c != 'b' && c != 'f' && c != 'n' && c != 'r' && c != 't') {
      return Step::kBroken;
    }
    FlushHigh(out);
    out->append(esc_).push_back(c);
    esc_.clear();
    escape_ = 0;
    return Step::kTake;
  }
  if (!std::isxdigit(static_cast<unsigned char>(c))) return Step::kBroken;
  esc_ += c;
  if (escape_ < 5) {
    ++escape_;
    return Step::kTake;
  }
  escape_ = 0;
  const unsigned v = static_cast<unsigned>(std::stoul(esc_.substr(2), nullptr, 16));
  const bool high = v >= 0xD800 && v <= 0xDBFF, low = v >= 0xDC00 && v <= 0xDFFF;
  if (!high_.empty() && low) {
    out->append(high_).append(esc_);
    high_.clear();
  } else {
    FlushHigh(out);
    if (high) {
      high_ = esc_;
    } else {
      out->append(low ? "\\ufffd" : esc_);
    }
  }
  esc_.clear();
  return Step::kTake;
}

// The first byte of a multi-byte character, with the range its next byte
// must fall in (RFC 3629: no overlong forms, no surrogates, nothing past U+10FFFF).
void JsonStreamScanner::StartUtf8(unsigned char u, std::string* out) {
  std::optional<Utf8Lead> lead = Utf8LeadOf(u);
  if (!lead || lead->continuation == 0) {
    out->append(kReplacement);
    return;
  }
  utf8_need_ = lead->continuation;
  utf8_lo_ = lead->lo;
  utf8_hi_ = lead->hi;
  utf8_.assign(1, static_cast<char>(u));
}

void JsonStreamScanner::FlushHigh(std::string* out) {
  if (high_.empty()) return;
  out->append("\\ufffd");
  high_.clear();
}

JsonStreamScanner::Step JsonStreamScanner::Number(char c, std::string* out) {
  const bool digit = IsDigit(c);
  const bool exp = c == 'e' || c == 'E';
  switch (num_) {
    case Num::kSign:
      if (!digit) return Step::kBroken;
      num_ = c == '0' ? Num::kZero : Num::kInt;
      int_digits_ = num_ == Num::kInt ? 1 : 0;
      return Take(c, out);
    case Num::kZero:
    case Num::kInt:
      if (digit && num_ == Num::kInt) {
        if (Overflows(int_digits_ + 1, exp_value_)) return Step::kBroken;
        ++int_digits_;
        return Take(c, out);
      }
      if (c == '.') {
        num_ = Num::kDot;
        return Take(c, out);
      }
      if (exp) {
        num_ = Num::kExp;
        return Take(c, out);
      }
      break;
    case Num::kDot:
    case Num::kFrac:
      if (digit) {
        num_ = Num::kFrac;
        return Take(c, out);
      }
      if (exp && num_ == Num::kFrac) {
        num_ = Num::kExp;
        return Take(c, out);
      }
      break;
    case Num::kExp:
      if (c == '+' || c == '-') {
        num_ = Num::kExpSign;
        exp_negative_ = c == '-';
        return Take(c, out);
      }
      [[fallthrough]];
    case Num::kExpSign:
    case Num::kExpInt:
      if (digit) {
        const int64_t exp = std::min<int64_t>(exp_value_ * 10 + (c - '0'), 1000000);
        if (Overflows(int_digits_, exp)) return Step::kBroken;
        exp_value_ = exp;
        num_ = Num::kExpInt;
        return Take(c, out);
      }
      break;
  }
  if (!NumberCanEnd()) return Step::kBroken;
  if (open_.empty()) return Step::kBroken;  // a top-level number has no end marker
  EndValue();
  return Push(c, out);  // c starts what follows the number
}

// Conservative: about 10^(int_digits - 1 + exponent); a double ends near 1.8e308.
bool JsonStreamScanner::Overflows(int64_t int_digits, int64_t exp) const {
  return int_digits - 1 + (exp_negative_ ? -exp : exp) > 307;
}

bool JsonStreamScanner::NumberCanEnd() const {
  return num_ == Num::kZero || num_ == Num::kInt || num_ == Num::kFrac || num_ == Num::kExpInt;
}

JsonStreamScanner::Step JsonStreamScanner::Take(char c, std::string* out) {
  out->push_back(c);
  return state_ == State::kDone ? Step::kDone : Step::kTake;
}

void JsonStreamScanner::EndValue() { state_ = open_.empty() ? State::kDone : State::kCommaOrEnd; }

JsonStreamScanner::Step JsonStreamScanner::Close(char c, std::string* out) {
  open_.pop_back();
  EndValue();
  return Take(c, out);
}

std::string JsonStreamScanner::Completion() const {
  std::string s;
  switch (state_) {
    case State::kDone: return s;
    case State::kString:  // a held escape is dropped
      if (utf8_need_ > 0) s += kReplacement;
      if (!high_.empty()) s += "\\ufffd";
      s += '"';
      if (key_) s += ":null";
      break;
    case State::kNumber:
      if (!NumberCanEnd()) s += '0';
      break;
    case State::kLiteral: s += literal_rest_; break;
    case State::kColon: s += ":null"; break;
    case State::kValue: s += "null"; break;
    case State::kKey: s += "\"\":null"; break;  // after a comma: an object needs one more member
    case State::kValueOrEnd:
    case State::kKeyOrEnd:
    case State::kCommaOrEnd: break;
  }
  for (auto it = open_.rbegin(); it != open_.rend(); ++it) s += *it == '{' ? '}' : ']';
  return s;
}

}  // namespace pg
