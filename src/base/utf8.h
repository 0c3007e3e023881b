// UTF-8: the one definition of well-formed UTF-8 the modules share (RFC
// 3629: no overlong forms, no surrogates U+D800..U+DFFF, nothing past
// U+10FFFF), in the three shapes its users need:
//
//   Utf8LeadOf(b)          what byte b starts: how many continuation bytes
//                          follow and the range the first of them must lie
//                          in (the ranges are what rule out overlongs,
//                          surrogates and > U+10FFFF); nullopt for a byte
//                          that cannot start a character. For a scanner fed
//                          a byte at a time (chat/json_stream_scanner.h).
//   DecodeUtf8Char(s, i)   the character at s[i] and its length (0 = not
//                          well formed there).
//   IsValidUtf8(s)         the whole string is well formed.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace pg {

struct Utf8Lead {
  int continuation = 0;     // continuation bytes after the lead (0 = ASCII)
  unsigned char lo = 0x80;  // range of the first continuation byte; the others are 0x80..0xBF
  unsigned char hi = 0xBF;
};

std::optional<Utf8Lead> Utf8LeadOf(unsigned char b);

// Length of the character at s[i] (1..4) with its code point in *cp, or 0
// when s[i] does not start a well-formed character (or it is cut by the end).
size_t DecodeUtf8Char(std::string_view s, size_t i, char32_t* cp);

bool IsValidUtf8(std::string_view s);

}  // namespace pg
