#include "base/held_text.h"
#include "tokenizer/tokenizer.h"
#include "tokenizer/unicode.h"

namespace pg {
namespace {

// Number of bytes at the end of s that form the start of a UTF-8 sequence
// still missing continuation bytes (0 if s ends on a complete character or
// with bytes that can never become valid).
size_t IncompleteTail(const std::string& s) {
  const size_t n = s.size();
  // A sequence is at most 4 bytes, so its lead byte is among the last 3.
  for (size_t back = 1; back <= 3 && back <= n; ++back) {
    const uint8_t b = static_cast<uint8_t>(s[n - back]);
    if ((b & 0xC0) == 0x80) continue;    // continuation byte: keep looking for the lead
    if (b < 0xC0 || b > 0xF7) return 0;  // ASCII or invalid lead: nothing to wait for
    return Utf8SeqLen(b) > back ? back : 0;
  }
  return 0;
}

}  // namespace

std::string IncrementalDecoder::Push(int32_t id) {
  pending_ += tok_.TokenToPiece(id, render_special_);
  const size_t hold = IncompleteTail(pending_);
  return ReleaseAllBut(&pending_, hold);
}

std::string IncrementalDecoder::Flush() { return ReleaseAllBut(&pending_, 0); }

}  // namespace pg
