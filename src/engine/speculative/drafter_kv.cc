#include "engine/speculative/drafter_kv.h"

#include <fmt/format.h>

#include "base/check.h"
#include "engine/kv_cache_setup.h"

namespace pg {

Result<std::unique_ptr<KvCacheManager>> CreateDrafterKv(const KvLayout& layout, const std::string& identity,
                                                        uint64_t device_bytes, const char* what, KvPages* pages) {
  PG_RETURN_IF_ERROR(layout.Validate());
  KvCacheConfig kc = KvCacheConfig::Baseline(layout, identity, device_bytes);
  kc.prefix_cache = false;  // private blocks only: nothing is published or matched
  kc.io_threads = 1;
  auto kv = KvCacheManager::Create(std::move(kc));
  if (!kv.ok()) return InvalidArgument(fmt::format("{}: {}", what, kv.status().message()));
  *pages = DevicePagesOf(**kv, layout);
  return std::move(*kv);
}

bool ReserveDrafterBlocks(KvCacheManager& kv, SeqId id, int64_t tokens, bool* allocated, std::vector<BlockId>* table) {
  if (!*allocated) {
    PrefixMatch m = kv.Match({}, CacheRequest{"", "", /*use_prefix_cache=*/false});
    if (!kv.CanAllocate(kv.BlocksNeeded(m, tokens))) return false;
    if (!kv.AllocateSequence(id, std::move(m), tokens, table).ok()) return false;
    PG_CHECK(kv.PromotionReady(id, table));  // nothing to promote
    *allocated = true;
    return true;
  }
  const int64_t have = kv.SequenceTokens(id);
  if (tokens <= have) return true;
  if (!kv.CanAppend(id, tokens - have)) return false;
  return kv.Append(id, tokens - have, table).ok();
}

void TruncateDrafterBlocks(KvCacheManager& kv, SeqId id, int64_t n, bool allocated, std::vector<BlockId>* table) {
  if (!allocated || kv.SequenceTokens(id) <= n) return;
  const Status st = kv.TruncateSequence(id, n, table);
  PG_CHECK_MSG(st.ok(), st.ToString().c_str());
}

}  // namespace pg
