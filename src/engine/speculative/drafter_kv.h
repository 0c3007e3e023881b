// The KV pool a model drafter owns (the draft model's, the MTP block's): a
// baseline KvCacheManager of private blocks only (nothing published or
// matched), its device pages, and each sequence's growth and roll-back in it.
// Called from the engine thread only, as the manager.
#pragma once

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "base/status.h"
#include "kv/kv_cache_manager.h"
#include "model/kv_pages.h"

namespace pg {

// A pool of device_bytes for blocks of `layout`, its blocks named by
// `identity`; *pages set to its device pages. Errors start with `what`.
Result<std::unique_ptr<KvCacheManager>> CreateDrafterKv(const KvLayout& layout, const std::string& identity,
                                                        uint64_t device_bytes, const char* what, KvPages* pages);

// Grows seq's blocks to `tokens` positions, allocating them on first use
// (*allocated); false when the pool has no room.
bool ReserveDrafterBlocks(KvCacheManager& kv, SeqId id, int64_t tokens, bool* allocated, std::vector<BlockId>* table);

// Releases the blocks past the first n tokens, when seq holds more.
void TruncateDrafterBlocks(KvCacheManager& kv, SeqId id, int64_t n, bool allocated, std::vector<BlockId>* table);

// Forgets every sequence of `seqs` (a drafter's map of SeqId to its state,
// which has `allocated`) not in `live`, freeing its blocks.
template <class Seqs>
void RetainDrafterSeqs(KvCacheManager& kv, Seqs& seqs, std::span<const SeqId> live) {
  for (auto it = seqs.begin(); it != seqs.end();) {
    if (std::find(live.begin(), live.end(), it->first) != live.end()) {
      ++it;
      continue;
    }
    if (it->second.allocated) kv.FreeSequence(it->first);
    it = seqs.erase(it);
  }
}

// Forgets sequence `seq` of `seqs`, freeing its blocks.
template <class Seqs>
void FreeDrafterSeq(KvCacheManager& kv, Seqs& seqs, SeqId seq) {
  auto it = seqs.find(seq);
  if (it == seqs.end()) return;
  if (it->second.allocated) kv.FreeSequence(seq);
  seqs.erase(it);
}

}  // namespace pg
