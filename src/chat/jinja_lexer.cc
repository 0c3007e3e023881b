#include "chat/jinja_lexer.h"

#include <cstring>

#include "chat/jinja_value.h"

namespace pg::jinja {
namespace {

bool IsSpace(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }
bool IsDigit(char c) { return c >= '0' && c <= '9'; }
bool IsNameStart(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool IsNameChar(char c) { return IsNameStart(c) || IsDigit(c); }

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

std::string Normalize(const std::string& src) {
  std::string out;
  out.reserve(src.size());
  for (size_t i = 0; i < src.size(); ++i) {
    if (src[i] == '\r') {
      out.push_back('\n');
      if (i + 1 < src.size() && src[i + 1] == '\n') ++i;
    } else {
      out.push_back(src[i]);
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();  // keep_trailing_newline=False
  return out;
}

class Lexer {
 public:
  explicit Lexer(std::string src) : src_(std::move(src)) {}

  std::vector<Token> Run() {
    bool line_starting = true;
    while (pos_ < src_.size()) {
      size_t start = FindTagStart(pos_);
      if (start == std::string::npos) {
        Emit(TokenType::kText, src_.substr(pos_));
        Advance(src_.size());
        break;
      }
      std::string text = src_.substr(pos_, start - pos_);
      char kind = src_[start + 1];  // '{', '%' or '#'
      char mod = start + 2 < src_.size() ? src_[start + 2] : '\0';
      if (mod == '-') {
        size_t end = text.size();
        while (end > 0 && IsSpace(text[end - 1])) --end;
        text.resize(end);
      } else if (mod != '+' && kind != '{') {  // lstrip_blocks
        size_t l_pos = text.rfind('\n');
        l_pos = l_pos == std::string::npos ? 0 : l_pos + 1;
        if ((l_pos > 0 || line_starting) && l_pos < text.size() &&
            text.find_first_not_of(" \t\f\v\r", l_pos) == std::string::npos) {
          text.resize(l_pos);
        }
      }
      if (!text.empty()) Emit(TokenType::kText, text);
      Advance(start + 2 + ((mod == '-' || mod == '+') ? 1 : 0));
      if (kind == '#') {
        LexComment();
      } else {
        LexTag(kind);
      }
      line_starting = pos_ > 0 && src_[pos_ - 1] == '\n';
    }
    Emit(TokenType::kEof, "");
    return std::move(tokens_);
  }

 private:
  [[noreturn]] void Error(const std::string& msg) { Fail("line " + std::to_string(line_) + ": " + msg); }

  size_t FindTagStart(size_t from) const {
    for (size_t i = from; i + 1 < src_.size(); ++i) {
      if (src_[i] == '{' && (src_[i + 1] == '{' || src_[i + 1] == '%' || src_[i + 1] == '#')) return i;
    }
    return std::string::npos;
  }

  // Moves pos_ to `to`, counting lines.
  void Advance(size_t to) {
    for (; pos_ < to; ++pos_) {
      if (src_[pos_] == '\n') ++line_;
    }
  }

  void Emit(TokenType type, std::string text) {
    Token t;
    t.type = type;
    t.text = std::move(text);
    t.line = line_;
    tokens_.push_back(std::move(t));
  }

  // After a closing delimiter: `-` strips all whitespace, otherwise
  // trim_blocks removes one newline (blocks and comments only).
  void AfterTagEnd(bool dash, bool trim_newline) {
    if (dash) {
      size_t p = pos_;
      while (p < src_.size() && IsSpace(src_[p])) ++p;
      Advance(p);
    } else if (trim_newline && pos_ < src_.size() && src_[pos_] == '\n') {
      Advance(pos_ + 1);
    }
  }

  void LexComment() {
    size_t end = src_.find("#}", pos_);
    if (end == std::string::npos) Error("unterminated comment");
    bool dash = end > pos_ && src_[end - 1] == '-';
    Advance(end + 2);
    AfterTagEnd(dash, true);
  }

  void LexTag(char kind) {
    Emit(kind == '{' ? TokenType::kVarBegin : TokenType::kBlockBegin, "");
    const char close = kind == '{' ? '}' : '%';
    int depth = 0;
    while (true) {
      while (pos_ < src_.size() && IsSpace(src_[pos_])) Advance(pos_ + 1);
      if (pos_ >= src_.size())
        Error(kind == '{' ? "unexpected end of template, expected '}}'" : "unexpected end of template, expected '%}'");
      if (depth == 0) {
        char c = src_[pos_];
        bool has_mod = (c == '-' || (c == '+' && kind == '%'));
        size_t at = pos_ + (has_mod ? 1 : 0);
        if (at + 1 < src_.size() && src_[at] == close && src_[at + 1] == '}') {
          Emit(kind == '{' ? TokenType::kVarEnd : TokenType::kBlockEnd, "");
          Advance(at + 2);
          AfterTagEnd(c == '-', kind == '%' && c != '+');
          return;
        }
      }
      LexExprToken(depth);
    }
  }

  void LexExprToken(int& depth) {
    char c = src_[pos_];
    if (IsNameStart(c)) {
      size_t e = pos_;
      while (e < src_.size() && IsNameChar(src_[e])) ++e;
      Emit(TokenType::kName, src_.substr(pos_, e - pos_));
      Advance(e);
      return;
    }
    if (IsDigit(c)) {
      LexNumber();
      return;
    }
    if (c == '\'' || c == '"') {
      LexString(c);
      return;
    }
    static const char* kTwo[] = {"//", "**", "==", "!=", "<=", ">="};
    for (const char* op : kTwo) {
      if (src_.compare(pos_, 2, op) == 0) {
        Emit(TokenType::kOp, op);
        Advance(pos_ + 2);
        return;
      }
    }
    if (std::strchr("+-*/%~<>=.,:|()[]{}", c) != nullptr && c != '\0') {
      if (c == '(' || c == '[' || c == '{') ++depth;
      if ((c == ')' || c == ']' || c == '}') && depth > 0) --depth;
      Emit(TokenType::kOp, std::string(1, c));
      Advance(pos_ + 1);
      return;
    }
    Error(std::string("unexpected char '") + c + "'");
  }

  // Digits with optional '_' separators starting at p; returns the end.
  size_t ScanDigits(size_t p, std::string& out) const {
    while (p < src_.size() && (IsDigit(src_[p]) || (src_[p] == '_' && p + 1 < src_.size() && IsDigit(src_[p + 1])))) {
      if (src_[p] != '_') out.push_back(src_[p]);
      ++p;
    }
    return p;
  }

  void LexNumber() {
    std::string digits;
    size_t p = ScanDigits(pos_, digits);
    bool after_dot = pos_ > 0 && src_[pos_ - 1] == '.';  // `x.0.1` is attribute access
    bool is_float = false;
    if (!after_dot && p + 1 < src_.size() && src_[p] == '.' && IsDigit(src_[p + 1])) {
      digits.push_back('.');
      p = ScanDigits(p + 1, digits);
      is_float = true;
    }
    if (!after_dot && p < src_.size() && (src_[p] == 'e' || src_[p] == 'E')) {
      size_t q = p + 1;
      std::string exp = "e";
      if (q < src_.size() && (src_[q] == '+' || src_[q] == '-')) exp.push_back(src_[q++]);
      if (q < src_.size() && IsDigit(src_[q])) {
        p = ScanDigits(q, exp);
        digits += exp;
        is_float = true;
      }
    }
    Token t;
    t.line = line_;
    t.text = digits;
    if (is_float) {
      t.type = TokenType::kFloat;
      t.float_value = std::strtod(digits.c_str(), nullptr);
    } else {
      t.type = TokenType::kInt;
      errno = 0;
      char* end = nullptr;
      t.int_value = std::strtoll(digits.c_str(), &end, 10);
      if (errno == ERANGE) Error("integer literal out of range: " + digits);
    }
    tokens_.push_back(std::move(t));
    Advance(p);
  }

  void LexString(char quote) {
    size_t p = pos_ + 1;
    std::string out;
    while (true) {
      if (p >= src_.size()) Error("unterminated string literal");
      char c = src_[p];
      if (c == quote) break;
      if (c != '\\') {
        out.push_back(c);
        ++p;
        continue;
      }
      if (p + 1 >= src_.size()) Error("unterminated string literal");
      char e = src_[p + 1];
      p += 2;
      switch (e) {
        case 'n': out.push_back('\n'); break;
        case 't': out.push_back('\t'); break;
        case 'r': out.push_back('\r'); break;
        case 'a': out.push_back('\a'); break;
        case 'b': out.push_back('\b'); break;
        case 'f': out.push_back('\f'); break;
        case 'v': out.push_back('\v'); break;
        case '\\': out.push_back('\\'); break;
        case '\'': out.push_back('\''); break;
        case '"': out.push_back('"'); break;
        case '\n': break;  // line continuation
        case 'x':
        case 'u':
        case 'U': {
          int n = e == 'x' ? 2 : e == 'u' ? 4 : 8;
          char32_t cp = 0;
          for (int i = 0; i < n; ++i) {
            int h = p + i < src_.size() ? HexDigit(src_[p + i]) : -1;
            if (h < 0) Error(std::string("truncated \\") + e + " escape in string literal");
            cp = cp * 16 + static_cast<char32_t>(h);
          }
          if (cp > 0x10FFFF) Error("escape out of Unicode range in string literal");
          p += n;
          AppendUtf8(out, cp);
          break;
        }
        default:
          if (e >= '0' && e <= '7') {
            char32_t cp = static_cast<char32_t>(e - '0');
            for (int i = 0; i < 2 && p < src_.size() && src_[p] >= '0' && src_[p] <= '7'; ++i)
              cp = cp * 8 + (src_[p++] - '0');
            AppendUtf8(out, cp);
          } else {  // unknown escape: Python keeps the backslash
            out.push_back('\\');
            out.push_back(e);
          }
      }
    }
    Token t;
    t.type = TokenType::kString;
    t.text = std::move(out);
    t.line = line_;
    tokens_.push_back(std::move(t));
    Advance(p + 1);
  }

  std::string src_;
  size_t pos_ = 0;
  int line_ = 1;
  std::vector<Token> tokens_;
};

}  // namespace

std::vector<Token> Lex(const std::string& source) { return Lexer(Normalize(source)).Run(); }

}  // namespace pg::jinja
