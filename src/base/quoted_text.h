// QuotedText: a name or value read from a file (a GGUF key, a safetensors
// tensor name, a config field), quoted for a one-line error message: control,
// backslash and non-ASCII bytes as \xNN, cut after 64 bytes. Thread-safety:
// a pure function.
#pragma once

#include <string>

namespace pg {

inline std::string QuotedText(const std::string& s) {
  static const char kHex[] = "0123456789abcdef";
  std::string out = "'";
  for (size_t i = 0; i < s.size() && i < 64; ++i) {
    const auto ch = static_cast<unsigned char>(s[i]);
    if (ch >= 0x20 && ch < 0x7f && ch != '\\') {
      out += static_cast<char>(ch);
    } else {
      out += "\\x";
      out += kHex[ch >> 4];
      out += kHex[ch & 15];
    }
  }
  if (s.size() > 64) out += "...";
  return out + "'";
}

}  // namespace pg
