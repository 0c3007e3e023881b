#include "base/utf8.h"

namespace pg {

std::optional<Utf8Lead> Utf8LeadOf(unsigned char b) {
  if (b < 0x80) return Utf8Lead{0, 0x80, 0xBF};
  if (b >= 0xC2 && b <= 0xDF) return Utf8Lead{1, 0x80, 0xBF};
  if (b >= 0xE0 && b <= 0xEF) {
    return Utf8Lead{2, static_cast<unsigned char>(b == 0xE0 ? 0xA0 : 0x80),
                    static_cast<unsigned char>(b == 0xED ? 0x9F : 0xBF)};
  }
  if (b >= 0xF0 && b <= 0xF4) {
    return Utf8Lead{3, static_cast<unsigned char>(b == 0xF0 ? 0x90 : 0x80),
                    static_cast<unsigned char>(b == 0xF4 ? 0x8F : 0xBF)};
  }
  return std::nullopt;  // a continuation byte, C0/C1 (overlong) or F5..FF (past U+10FFFF)
}

size_t DecodeUtf8Char(std::string_view s, size_t i, char32_t* cp) {
  if (i >= s.size()) return 0;
  const unsigned char b = static_cast<unsigned char>(s[i]);
  std::optional<Utf8Lead> lead = Utf8LeadOf(b);
  if (!lead) return 0;
  const size_t len = static_cast<size_t>(lead->continuation) + 1;
  if (i + len > s.size()) return 0;
  static constexpr unsigned char kLeadBits[4] = {0x7F, 0x1F, 0x0F, 0x07};
  char32_t v = b & kLeadBits[lead->continuation];
  for (size_t k = 1; k < len; ++k) {
    const unsigned char c = static_cast<unsigned char>(s[i + k]);
    const unsigned char lo = k == 1 ? lead->lo : 0x80, hi = k == 1 ? lead->hi : 0xBF;
    if (c < lo || c > hi) return 0;
    v = (v << 6) | (c & 0x3F);
  }
  *cp = v;
  return len;
}

bool IsValidUtf8(std::string_view s) {
  char32_t cp = 0;
  for (size_t i = 0; i < s.size();) {
    const size_t len = DecodeUtf8Char(s, i, &cp);
    if (len == 0) return false;
    i += len;
  }
  return true;
}

}  // namespace pg
