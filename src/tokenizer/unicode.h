// Unicode helpers for the tokenizers: UTF-8 decoding with llama.cpp's error
// policy, general-category classes of code points (from a generated table),
// the White_Space property, GPT-2's byte <-> printable code point map, and
// the literal substring replacement the normalizers and decoders share.
//
// Thread-safety: pure functions over immutable tables; safe from any thread.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace pg {

// Unicode general categories, collapsed to their major class.
enum class UnicodeCategory : uint8_t {
  kUndefined = 0,    // Cn (unassigned), also anything past U+10FFFF
  kLetter = 1,       // L*
  kNumber = 2,       // N*
  kMark = 3,         // M*
  kPunctuation = 4,  // P*
  kSymbol = 5,       // S*
  kSeparator = 6,    // Z*
  kControl = 7,      // Cc, Cf, Co, Cs
};

UnicodeCategory CategoryOf(uint32_t cp);
inline bool IsLetter(uint32_t cp) { return CategoryOf(cp) == UnicodeCategory::kLetter; }
inline bool IsNumber(uint32_t cp) { return CategoryOf(cp) == UnicodeCategory::kNumber; }
inline bool IsPunctuation(uint32_t cp) { return CategoryOf(cp) == UnicodeCategory::kPunctuation; }
// The White_Space property (what \s means in Python/Rust regexes).
bool IsWhitespace(uint32_t cp);

// Byte length of the UTF-8 sequence a lead byte announces (1 for stray
// continuation bytes), as llama.cpp's unicode_len_utf8.
inline size_t Utf8SeqLen(uint8_t lead) {
  static constexpr uint8_t kLen[16] = {1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 2, 2, 3, 4};
  return kLen[lead >> 4];
}

// Decodes UTF-8 into code points. Each byte that does not start a
// well-formed sequence becomes U+FFFD (one per byte), as llama.cpp does.
std::vector<uint32_t> DecodeUtf8(std::string_view text);
// Appends the UTF-8 encoding of cp (cp <= 0x10FFFF).
void AppendUtf8(uint32_t cp, std::string* out);

// GPT-2 byte-level encoding: every byte maps to one printable code point
// (printable Latin-1 bytes to themselves, the rest to U+0100...).
// ByteToUnicode(b) is that code point's UTF-8 text.
const std::string& ByteToUnicode(uint8_t byte);
// Inverse: the byte for code point cp, or -1 if cp is not in the map.
int UnicodeToByte(uint32_t cp);

// Replaces every occurrence of `from` in *s (left to right, not
// overlapping) with `to`; an empty `from` leaves *s as it is.
void ReplaceAll(std::string* s, std::string_view from, std::string_view to);

}  // namespace pg
