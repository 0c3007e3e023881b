// The sequence-number frame of vLLM's KV event messages (event_publisher.h):
// 8 bytes, big-endian; -1 (all ones) is the replay end marker. Shared by the
// publisher and `prosgrow route`'s subscriber. Pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

namespace pg {

inline std::string EncodeEventSeq(uint64_t seq) {
  std::string b(8, '\0');
  for (int i = 7; i >= 0; --i, seq >>= 8) b[i] = static_cast<char>(seq & 0xff);
  return b;
}

// Reads up to the first 8 bytes, big-endian.
inline uint64_t DecodeEventSeq(std::string_view bytes) {
  uint64_t v = 0;
  for (size_t i = 0; i < 8 && i < bytes.size(); ++i) v = (v << 8) | static_cast<uint8_t>(bytes[i]);
  return v;
}

inline constexpr uint64_t kEventSeqEnd = UINT64_MAX;  // -1: end of a replay answer

}  // namespace pg
