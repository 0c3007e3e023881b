// Tier and TierTokens: the tiers a KV block can live in, and a count of
// tokens per tier. They sit in base because the KV cache (src/kv) counts in
// them and the engine and the API (src/engine, src/server) report them, and
// the server never includes kv/. Value types; thread-safe.
//
//   device  the arena the forward pass reads (--kv-device-mem)
//   host    a RAM arena (--kv-host-mem)
//   disk    one file per block (--kv-disk-dir)
//   remote  Redis / Valkey, shared by replicas (--kv-remote)
// The prefix index tracks copies in the first kLocalTiers; a remote block is
// brought into the device tier before the index serves it.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>

namespace pg {

// Unscoped so that a tier indexes arrays and bit masks directly.
enum Tier : int { kDeviceTier = 0, kHostTier = 1, kDiskTier = 2, kRemoteTier = 3 };
inline constexpr int kNumTiers = 4;
inline constexpr int kLocalTiers = 3;  // device, host, disk: the tiers the prefix index tracks

// "device" | "host" | "disk" | "remote" ("?" for anything else).
inline const char* TierName(int tier) {
  switch (tier) {
    case kDeviceTier: return "device";
    case kHostTier: return "host";
    case kDiskTier: return "disk";
    case kRemoteTier: return "remote";
  }
  return "?";
}

// Tokens per tier, e.g. the prompt tokens of one request served from each
// tier, or the tokens a prefix match found in each; indexed by Tier.
struct TierTokens {
  std::array<int64_t, kNumTiers> by_tier{};  // remote: brought in from the remote tier for this request

  int64_t& operator[](int tier) { return by_tier[size_t(tier)]; }
  int64_t operator[](int tier) const { return by_tier[size_t(tier)]; }
  int64_t total() const {
    int64_t n = 0;
    for (int64_t t : by_tier) n += t;
    return n;
  }
  TierTokens& operator+=(const TierTokens& o) {
    for (int t = 0; t < kNumTiers; ++t) (*this)[t] += o[t];
    return *this;
  }
};

}  // namespace pg
