// How the engine sets up its tiered KV cache from an EngineConfig: the block
// layout for the model, the KvCacheConfig (tier sizes, policies, the remote
// tier, hints and quotas), and the cache's device arena seen as the forward
// pass's KvPages. Free functions over value types; no state.
#pragma once

#include <string>

#include "base/status.h"
#include "engine/engine_config.h"
#include "kv/kv_cache_manager.h"
#include "model/kv_pages.h"
#include "model/model_config.h"

namespace pg {

// The KV block layout of the model (mc) with c's page size and KV dtype
// (--kv-bf16). Not validated (KvLayout::Validate).
KvLayout KvLayoutOf(const ModelConfig& mc, const EngineConfig& c);

// The cache's settings: --policy baseline gives a device tier only, optimized
// adds the host and disk tiers, promotion threshold and session TTL; then
// the settings both policies share. identity names the K/V's arithmetic
// (KvModelIdentity, executor.h). Errors: an unknown --eviction or
// --write-policy, a hint or quota size that holds no block.
Result<KvCacheConfig> KvCacheConfigOf(const EngineConfig& c, const KvLayout& layout, const std::string& identity);

// The device arena of kv as the forward pass's pages: block b at
// DeviceBlockPtr(0) + b * stride (PG_CHECKed for every block); the stride is
// layout.block_bytes() when there is a single block.
KvPages DevicePagesOf(KvCacheManager& kv, const KvLayout& layout);

}  // namespace pg
