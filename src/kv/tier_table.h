// TierTable: which local tiers a cache has, which tier lies below which, and
// which take new copies now. TierStore keeps the cache's table (Open builds
// it from the tiers the config enables; a disk whose writes stop stops being
// writable); the eviction policy and the miss accounting read a copy of it,
// so none of them names a tier below another by hand.
//
// Tiers are numbered from the top: the device (0), then host, then disk. The
// tier below t is the next enabled tier after t, kNoTier for the lowest one.
// A disabled tier keeps a below too (so a walk down from it still ends).
// Value type; thread-safe.
#pragma once

#include <array>

#include "base/kv_tier.h"

namespace pg {

inline constexpr int kNoTier = -1;  // below() of the lowest enabled tier

struct TierTable {
  std::array<bool, kLocalTiers> enabled{};                        // the tier exists (a slot tier: it has slots)
  std::array<int, kLocalTiers> below{kNoTier, kNoTier, kNoTier};  // the tier an evicted copy goes down to
  std::array<bool, kLocalTiers> writable{};                       // copies may be written into it now

  // The table of the tiers `on` names, each of them writable.
  static TierTable Of(const std::array<bool, kLocalTiers>& on) {
    TierTable table;
    table.enabled = on;
    table.writable = on;
    for (int t = kLocalTiers - 1, next = kNoTier; t >= 0; --t) {
      table.below[size_t(t)] = next;
      if (on[size_t(t)]) next = t;
    }
    return table;
  }
  // The tier an evicted copy of `tier` is written to now: below(tier) when
  // that tier is writable, else kNoTier (the copy is simply dropped).
  int write_below(int tier) const {
    const int b = below[size_t(tier)];
    return b != kNoTier && writable[size_t(b)] ? b : kNoTier;
  }
  // The lowest enabled tier at or above `tier` (the device when none is).
  int lowest_at_or_above(int tier) const {
    int t = tier;
    while (t > kDeviceTier && !enabled[size_t(t)]) --t;
    return t;
  }
  int lowest() const { return lowest_at_or_above(kLocalTiers - 1); }
};

}  // namespace pg
