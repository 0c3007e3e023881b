// KvCacheConfig: the settings of the tiered KV cache (sizes of the tiers,
// policies, the remote tier, hints and quotas), and the policy names the
// flags parse. Plain value types. It is the one header the cache's parts
// (media/, movement/, policy/) take their configuration from; none of them
// includes the facade (kv_cache_manager.h).
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>

#include "base/status.h"
#include "kv/host_memory.h"
#include "kv/index/block_hash.h"
#include "kv/kv_layout.h"
#include "kv/remote_config.h"

namespace pg {

class BlockArena;  // media/block_arena.h

// Which EvictionPolicy (eviction_policy.h) the cache uses.
enum class EvictionKind {
  kLru,        // least recently used first
  kCostAware,  // lowest (recompute cost - reload cost) x recency x frequency first; chain tails first
};
enum class WritePolicy {
  kWriteThrough,  // copy a block to host (and host to disk) as soon as it is full
  kWriteBack,     // copy down only when a block is evicted from its tier
};

const char* EvictionPolicyName(EvictionKind p);
const char* WritePolicyName(WritePolicy p);
// "lru" | "cost" ; "write-through" | "write-back".
Result<EvictionKind> ParseEvictionPolicy(const std::string& s);
Result<WritePolicy> ParseWritePolicy(const std::string& s);

struct KvCacheConfig {
  KvLayout layout;
  // Names the model (and weights) whose KV this is, e.g. "qwen3-0.6b:<gguf sha>".
  // Blocks of another identity never match, also on disk.
  std::string model_identity;
  // The fleet secret's key (--kv-hash-secret-file / PROSGROW_KV_HASH_SECRET):
  // keys every block hash (block_hash.h); unkeyed (the default) without one.
  // Replicas share blocks only when they share the secret.
  BlockHashKey hash_key;
  uint64_t device_bytes = 0;  // --kv-device-mem; must hold at least one block
  uint64_t host_bytes = 0;    // --kv-host-mem; 0 = no host tier
  std::string disk_dir;       // --kv-disk-dir; "" = no disk tier (created if missing)
  uint64_t disk_bytes = 0;    // --kv-disk-size; required > 0 with a disk dir
  bool prefix_cache = true;   // false (--no-prefix-cache): no index, no reuse, allocation only
  EvictionKind eviction = EvictionKind::kCostAware;
  WritePolicy write_policy = WritePolicy::kWriteBack;
  // Host/disk hits shorter than this many tokens are recomputed, not promoted.
  int64_t min_promote_tokens = 0;
  // Retention applied by Hint() when it is given ttl_s < 0.
  double default_session_ttl_s = 60;
  // Background mover threads per lane (1 to 64): io_threads run the loads
  // into the device (promotions, remote imports), io_threads every other
  // copy (demotions, write-behind), so that a copy an eviction waits for
  // never queues behind a load (movement/tier_mover.h).
  int io_threads = 2;
  static constexpr int kMoverLanes = 2;                           // TierMover's lanes (asserted there)
  int mover_threads() const { return kMoverLanes * io_threads; }  // both lanes; one staging buffer each
  // Evicted blocks remembered per tier for miss reasons and what-if
  // (ghost_index.h); -1 = enough for the largest what-if point (4 GiB).
  int64_t ghost_blocks = -1;
  // Fault injection (--kv-debug-load-delay): every promotion copy waits this
  // long on its (load-lane) mover thread first, as a slow host/disk would. 0 = off.
  double debug_load_delay_s = 0;
  // Time source in seconds (tests inject a fake clock); default NowSeconds.
  std::function<double()> clock;
  // Makes the device tier's arena (n_blocks slots of block_bytes); empty =
  // a HostBlockArena in RAM. Tests pass a guarded arena (src/testing).
  std::function<Result<std::unique_ptr<BlockArena>>(int64_t n_blocks, size_t block_bytes)> device_arena;
  // The host tier's slots and the movers' staging buffers; empty = ordinary
  // RAM. With the device executor: pinned memory (gpu/executor/pinned_memory.h).
  HostMemory host_memory;
  // Remote tier in Redis/Valkey (docs/kv-cache.md "Remote tier"); url "" = none.
  RemoteTierConfig remote;
  // KV hints and quotas (docs/kv-cache.md "KV hints", "Quotas and fair share").
  // Most blocks held by pin / retain hints at once; -1 = the default (pin:
  // 1/4 of the host tier, or of the disk without one, or of the device with
  // neither; retain: 1/2 of host + disk, or of the device with neither).
  int64_t pin_budget_blocks = -1;
  int64_t retain_budget_blocks = -1;
  // Cached blocks one session may keep in the device / host tier (0 = no quota).
  int64_t session_quota_device_blocks = 0;
  int64_t session_quota_host_blocks = 0;
  // Eviction takes the session furthest above its fair share first (FairShareEviction).
  bool fair_share = false;
  // Session names tracked at once (LRU) and the idle time after which an
  // unretained one is forgotten (0 = never); SessionRetention.
  int64_t max_sessions = 65536;
  double session_idle_s = 3600;

  // Device only, LRU, write-back (the baseline of the benchmarks).
  static KvCacheConfig Baseline(const KvLayout& layout, std::string model_identity, uint64_t device_bytes);
  // Device + host + disk, cost-aware, write-back.
  static KvCacheConfig Optimized(const KvLayout& layout, std::string model_identity, uint64_t device_bytes,
                                 uint64_t host_bytes, std::string disk_dir, uint64_t disk_bytes);
};

}  // namespace pg
