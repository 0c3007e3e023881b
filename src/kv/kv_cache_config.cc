#include "kv/kv_cache_config.h"

#include <fmt/format.h>

namespace pg {

const char* EvictionPolicyName(EvictionKind p) { return p == EvictionKind::kLru ? "lru" : "cost"; }
const char* WritePolicyName(WritePolicy p) { return p == WritePolicy::kWriteThrough ? "write-through" : "write-back"; }

Result<EvictionKind> ParseEvictionPolicy(const std::string& s) {
  if (s == "lru") return EvictionKind::kLru;
  if (s == "cost" || s == "cost-aware") return EvictionKind::kCostAware;
  return InvalidArgument(fmt::format("eviction policy '{}': expected lru or cost", s));
}

Result<WritePolicy> ParseWritePolicy(const std::string& s) {
  if (s == "write-through") return WritePolicy::kWriteThrough;
  if (s == "write-back") return WritePolicy::kWriteBack;
  return InvalidArgument(fmt::format("write policy '{}': expected write-through or write-back", s));
}

KvCacheConfig KvCacheConfig::Baseline(const KvLayout& layout, std::string model_identity, uint64_t device_bytes) {
  KvCacheConfig c;
  c.layout = layout;
  c.model_identity = std::move(model_identity);
  c.device_bytes = device_bytes;
  c.eviction = EvictionKind::kLru;
  c.write_policy = WritePolicy::kWriteBack;
  return c;
}

KvCacheConfig KvCacheConfig::Optimized(const KvLayout& layout, std::string model_identity, uint64_t device_bytes,
                                       uint64_t host_bytes, std::string disk_dir, uint64_t disk_bytes) {
  KvCacheConfig c = Baseline(layout, std::move(model_identity), device_bytes);
  c.host_bytes = host_bytes;
  c.disk_dir = std::move(disk_dir);
  c.disk_bytes = disk_bytes;
  c.eviction = EvictionKind::kCostAware;
  return c;
}

}  // namespace pg
