#include "tokenizer/unicode.h"

#include <algorithm>
#include <array>

namespace pg {

extern const uint32_t kUnicodeCategoryRanges[];
extern const size_t kUnicodeCategoryRangeCount;

namespace {

constexpr uint32_t kMaxCodePoint = 0x10FFFF;

// Flat table for the Basic Multilingual Plane (64 KiB), built once from the
// ranges; planes above use binary search.
struct BmpTable {
  std::array<uint8_t, 0x10000> cat;
  BmpTable() {
    for (size_t i = 0; i < kUnicodeCategoryRangeCount; ++i) {
      const uint32_t start = kUnicodeCategoryRanges[i] >> 8;
      if (start >= 0x10000) break;
      const uint32_t end = i + 1 < kUnicodeCategoryRangeCount
                               ? std::min<uint32_t>(kUnicodeCategoryRanges[i + 1] >> 8, 0x10000)
                               : 0x10000;
      for (uint32_t cp = start; cp < end; ++cp) cat[cp] = kUnicodeCategoryRanges[i] & 0xFF;
    }
  }
};

const BmpTable& Bmp() {
  static const BmpTable table;
  return table;
}

struct ByteMap {
  std::array<std::string, 256> byte_to_text;
  std::array<int16_t, 512> cp_to_byte;  // all mapped code points are < 0x144
  ByteMap() {
    cp_to_byte.fill(-1);
    auto printable = [](int b) {
      return (b >= 0x21 && b <= 0x7E) || (b >= 0xA1 && b <= 0xAC) || (b >= 0xAE && b <= 0xFF);
    };
    int n = 0;
    for (int b = 0; b < 256; ++b) {
      const uint32_t cp = printable(b) ? static_cast<uint32_t>(b) : 256u + n++;
      AppendUtf8(cp, &byte_to_text[b]);
      cp_to_byte[cp] = static_cast<int16_t>(b);
    }
  }
};

const ByteMap& Bytes() {
  static const ByteMap map;
  return map;
}

}  // namespace

UnicodeCategory CategoryOf(uint32_t cp) {
  if (cp < 0x10000) return static_cast<UnicodeCategory>(Bmp().cat[cp]);
  if (cp > kMaxCodePoint) return UnicodeCategory::kUndefined;
  // Last range whose start <= cp.
  const uint32_t key = (cp << 8) | 0xFF;
  const uint32_t* end = kUnicodeCategoryRanges + kUnicodeCategoryRangeCount;
  const uint32_t* it = std::upper_bound(kUnicodeCategoryRanges, end, key);
  return static_cast<UnicodeCategory>(*(it - 1) & 0xFF);
}

bool IsWhitespace(uint32_t cp) {
  if (cp < 0x80) return (cp >= 0x09 && cp <= 0x0D) || cp == 0x20;
  switch (cp) {
    case 0x85:
    case 0xA0:
    case 0x1680:
    case 0x2028:
    case 0x2029:
    case 0x202F:
    case 0x205F:
    case 0x3000: return true;
    default: return cp >= 0x2000 && cp <= 0x200A;
  }
}

std::vector<uint32_t> DecodeUtf8(std::string_view s) {
  std::vector<uint32_t> out;
  out.reserve(s.size());
  const size_t n = s.size();
  auto cont = [&](size_t i) { return i < n && (static_cast<uint8_t>(s[i]) & 0xC0) == 0x80; };
  size_t i = 0;
  while (i < n) {
    const uint8_t b = static_cast<uint8_t>(s[i]);
    if (b < 0x80) {
      out.push_back(b);
      i += 1;
    } else if ((b & 0xE0) == 0xC0 && cont(i + 1)) {
      out.push_back(((b & 0x1F) << 6) | (s[i + 1] & 0x3F));
      i += 2;
    } else if ((b & 0xF0) == 0xE0 && cont(i + 1) && cont(i + 2)) {
      out.push_back(((b & 0x0F) << 12) | ((s[i + 1] & 0x3F) << 6) | (s[i + 2] & 0x3F));
      i += 3;
    } else if ((b & 0xF8) == 0xF0 && cont(i + 1) && cont(i + 2) && cont(i + 3)) {
      out.push_back(((b & 0x07) << 18) | ((s[i + 1] & 0x3F) << 12) | ((s[i + 2] & 0x3F) << 6) | (s[i + 3] & 0x3F));
      i += 4;
    } else {
      out.push_back(0xFFFD);
      i += 1;
    }
  }
  return out;
}

void AppendUtf8(uint32_t cp, std::string* out) {
  if (cp <= 0x7F) {
    out->push_back(static_cast<char>(cp));
  } else if (cp <= 0x7FF) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp <= 0xFFFF) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | ((cp >> 18) & 0x07)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

const std::string& ByteToUnicode(uint8_t byte) { return Bytes().byte_to_text[byte]; }

int UnicodeToByte(uint32_t cp) { return cp < 512 ? Bytes().cp_to_byte[cp] : -1; }

void ReplaceAll(std::string* s, std::string_view from, std::string_view to) {
  if (from.empty()) return;
  std::string out;
  out.reserve(s->size());
  size_t pos = 0;
  for (size_t hit; (hit = s->find(from, pos)) != std::string::npos; pos = hit + from.size()) {
    out.append(*s, pos, hit - pos);
    out.append(to);
  }
  out.append(*s, pos, std::string::npos);
  *s = std::move(out);
}

}  // namespace pg
