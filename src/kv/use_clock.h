// UseClock: the logical time of the cache's lookups, commits and remote
// imports, and the use stamps they put on index entries, which the eviction
// order reads (last tick, last use in seconds, uses, retention session).
// Shared by KvCacheManager::Impl (Match), SequenceTable (commits) and
// RemoteLookups (imports). Thread-safety: none; the scheduler thread owns it.
#pragma once

#include <cstdint>

#include "kv/index/prefix_index.h"
#include "kv/policy/session_retention.h"

namespace pg {

class UseClock {
 public:
  explicit UseClock(const SessionRetention& retention) : retention_(retention) {}

  // One more lookup, commit or import batch: the uses stamped from now on are newer.
  void Advance() { ++tick_; }
  // Stamps a use of e now; session >= 0 makes it e's retention session.
  void Touch(IndexEntry& e, int32_t session) const {
    e.last_tick = tick_;
    e.last_use_s = retention_.now();
    e.uses++;
    if (session >= 0) e.session = session;
  }

 private:
  const SessionRetention& retention_;
  uint64_t tick_ = 0;
};

}  // namespace pg
