// KvBlockObserver: told when a tier starts or stops holding a cached block,
// so the engine can publish KV events (src/kvevents) for routers. Called on
// the scheduler thread, from inside the prefix index's bookkeeping: an
// implementation must only record the change (no calls back into kv/).
#pragma once

#include "kv/index/prefix_index.h"

namespace pg {

class KvBlockObserver {
 public:
  virtual ~KvBlockObserver() = default;
  // `tier` (kDeviceTier, kHostTier, kDiskTier) now holds entry `e` (a copy
  // in flight counts: it is about to be readable).
  virtual void OnBlockStored(int tier, const IndexEntry& e) = 0;
  // `tier` no longer holds entry `e`.
  virtual void OnBlockRemoved(int tier, const IndexEntry& e) = 0;
};

}  // namespace pg
