#include "engine/kv_cache_setup.h"

#include "base/check.h"
#include "engine/backend.h"
#include "engine/kv_hint_config.h"

namespace pg {

KvLayout KvLayoutOf(const ModelConfig& mc, const EngineConfig& c) {
  return mc.KvLayoutFor(c.page_tokens, mc.KvDtypeFor(c.kv_bf16, c.attention == AttentionMode::kPrecise));
}

Result<KvCacheConfig> KvCacheConfigOf(const EngineConfig& c, const KvLayout& layout, const std::string& identity) {
  KvCacheConfig kc;
  if (c.policy == ServePolicy::kBaseline) {
    kc = KvCacheConfig::Baseline(layout, identity, c.kv_device_bytes);
  } else {
    kc = KvCacheConfig::Optimized(layout, identity, c.kv_device_bytes, HostTierBytes(c), c.kv_disk_dir,
                                  DiskTierBytes(c));
    kc.min_promote_tokens = c.min_promote_tokens;
    kc.default_session_ttl_s = c.session_ttl_s;
  }
  kc.prefix_cache = c.prefix_cache;
  kc.debug_load_delay_s = c.kv_debug_load_delay_s;
  kc.remote.url = c.kv_remote;
  kc.remote.ttl_s = c.kv_remote_ttl_s;
  kc.remote.max_bytes = c.kv_remote_bytes;
  kc.remote.timeout_s = c.kv_remote_timeout_s;
  kc.remote.password = c.kv_remote_password;
  kc.remote.secret = c.kv_remote_secret;
  kc.hash_key = BlockHashKey(c.kv_hash_secret);
  if (c.backend) {
    kc.device_arena = [b = c.backend](int64_t n_blocks, size_t block_bytes) {
      return b->MakeDeviceArena(n_blocks, block_bytes);
    };
    kc.host_memory = c.backend->host_memory();
  }
  if (!c.eviction.empty()) {
    PG_ASSIGN_OR_RETURN(kc.eviction, ParseEvictionPolicy(c.eviction));
  }
  if (!c.write_policy.empty()) {
    PG_ASSIGN_OR_RETURN(kc.write_policy, ParseWritePolicy(c.write_policy));
  }
  PG_RETURN_IF_ERROR(ApplyKvHintConfig(c, layout.block_bytes(), &kc));
  return kc;
}

KvPages DevicePagesOf(KvCacheManager& kv, const KvLayout& layout) {
  KvPages pages;
  pages.base = kv.DeviceBlockPtr(0);
  pages.block_bytes =
      kv.device_blocks() > 1 ? static_cast<size_t>(kv.DeviceBlockPtr(1) - kv.DeviceBlockPtr(0)) : layout.block_bytes();
  pages.layout = kv.layout();  // the cache and the forward pass share one layout type
  for (int64_t b = 0; b < kv.device_blocks(); ++b)
    PG_CHECK(kv.DeviceBlockPtr(static_cast<BlockId>(b)) == pages.base + b * pages.block_bytes);
  return pages;
}

}  // namespace pg
