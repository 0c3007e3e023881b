// SessionUsage: how many blocks each session holds in each slot tier
// (device, host), kept up to date from TierStore::RefreshEntry, and the
// fair share that derives from it.
//
// A block counts for the session recorded on its index entry (the last
// session that used it, IndexEntry::session); blocks of no session (-1) are
// not counted per session. A copy counts from the moment its slot is taken
// (a copy in flight included). Per-session quotas (QuotaEnforcer in
// prefix_hints.h) and the fair-share eviction mode (FairShareEviction in
// eviction_policy.h) read it.
//
// Only sessions holding blocks have a row, so memory and Heaviest()'s scan
// are bounded by the blocks in the tiers, not by the sessions ever seen.
//
// Thread-safety: none; the scheduler thread owns it.
#pragma once

#include <array>
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "kv/index/prefix_index.h"

namespace pg {

class SessionUsage {
 public:
  // Capacity of slot tier t (kDeviceTier or kHostTier) in blocks.
  void SetCapacity(int tier, int64_t blocks) { capacity_[tier] = blocks; }
  int64_t capacity(int tier) const { return capacity_[tier]; }

  // Call after entry `id`'s copies or session changed (TierStore::RefreshEntry).
  void Update(uint32_t id, const IndexEntry& e);
  // Blocks of `session` in slot tier t (0 for -1 or an unknown session).
  int64_t blocks(int32_t session, int tier) const;
  // Sessions holding at least one block in tier t.
  int64_t active_sessions(int tier) const { return active_[tier]; }
  // capacity / active sessions (the whole tier when at most one is active).
  int64_t fair_share(int tier) const;
  // The session furthest above its fair share in tier t, or -1 when none is above.
  int32_t Heaviest(int tier) const;

  // The counts equal a recount over the index.
  Status CheckIntegrity(const PrefixIndex& index) const;

 private:
  struct Counted {
    int32_t session = -1;
    uint8_t mask = 0;  // slot tiers counted (bit t)
  };
  void Add(int32_t session, int tier, int delta);

  int64_t capacity_[2] = {0, 0};
  std::vector<Counted> counted_;                             // by entry id
  std::unordered_map<int32_t, std::array<int64_t, 2>> per_;  // by session index: blocks per slot tier (> 0)
  int64_t active_[2] = {0, 0};
};

}  // namespace pg
