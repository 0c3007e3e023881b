// KvCacheManager::Impl and the KV hints (docs/kv-cache.md "KV hints"): one
// hint on a prompt prefix, applied to the blocks the index holds for it.
// Scheduler thread only.
#include "kv/kv_cache_manager_impl.h"

namespace pg {

PrefixHintResult KvCacheManager::Impl::ApplyPrefixHint(std::span<const int32_t> prefix, const CacheRequest& request,
                                                       PrefixAction action, double ttl_s) {
  seqs_->ProcessCompletions();
  PrefixHintResult r;
  if (!cfg_.prefix_cache || !request.use_prefix_cache) return r;
  std::vector<uint32_t> chain;
  store_.index().MatchChain(RootHash(cfg_.model_identity, request.salt, cfg_.hash_key), prefix, page_,
                            int64_t(prefix.size()) / page_, cfg_.hash_key, &chain);
  PrefixHints& h = *hints_;
  switch (action) {
    case PrefixAction::kRetain: r.blocks = h.Hold(chain, BlockHold::kRetained, ttl_s, &r.refused); break;
    case PrefixAction::kPin: r.blocks = h.Hold(chain, BlockHold::kPinned, ttl_s, &r.refused); break;
    case PrefixAction::kDemote:
      r.blocks = h.Demote(chain);
      h.Enforce(retention_.Index(request.session));
      break;
    case PrefixAction::kPrefetch: r.blocks = h.Prefetch(chain); break;
  }
  return r;
}

}  // namespace pg
