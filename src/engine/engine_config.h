// EngineConfig: everything `prosgrow serve` / `generate` set on the engine.
// Plain value type (model_file, when set, is shared).
#pragma once

#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "model/attention.h"
#include "model/mla_layer.h"
#include "spec/spec_config.h"

namespace pg {

class ModelSource;  // model/model_source.h
class Backend;      // engine/backend.h

enum class ServePolicy {
  kBaseline,   // device-tier prefix cache only, FCFS, LRU (a standard local server)
  kOptimized,  // + host and disk tiers, cost-aware eviction, session retention,
               //   asynchronous promotion and cache-aware ordering
};

// EngineConfig::kv_host_bytes when --kv-host-mem is not given: 4x the device tier.
inline constexpr uint64_t kDefaultHostTierBytes = ~uint64_t{0};

struct EngineConfig {
  std::string model_path;
  // model_path already opened (serve: once, for its preflight and the
  // engine); null: Engine::Create opens model_path.
  std::shared_ptr<const ModelSource> model_file;
  ServePolicy policy = ServePolicy::kOptimized;
  int threads = 0;                 // 0 = cores
  int64_t ctx_size = 0;            // per sequence; 0 = min(model's context, 8192)
  int64_t max_batch_tokens = 512;  // tokens per forward step (decode + prefill chunks)
  int64_t max_seqs = 16;           // running sequences
  // Optimized policy (Scheduler::PlanPrefills): a prefill with more than
  // long_prefill_tokens left advances at most prefill_slice_tokens a step
  // while the step is shared, and at most long_prefill_tokens alone (or a
  // slice, if larger; 0 = whole chunks either way).
  int64_t prefill_slice_tokens = 64;
  int64_t long_prefill_tokens = 256;
  int64_t max_queue = 256;  // waiting requests before Submit refuses
  int64_t page_tokens = 16;
  bool kv_bf16 = false;                                         // KV in bf16 instead of f16
  AttentionMode attention = AttentionMode::kTiledF32;           // f16-KV attention arithmetic (--attn)
  SparseAttention sparse_attention = SparseAttention::kSparse;  // DSA models' key visits (--attn-sparse)
  uint64_t kv_device_bytes = 256ull << 20;
  // optimized: 0 = no host tier (--kv-host-mem 0); the default is 4x device
  uint64_t kv_host_bytes = kDefaultHostTierBytes;
  std::string kv_disk_dir;          // optimized: "" = no disk tier
  uint64_t kv_disk_bytes = 0;       // 0 with a dir = 4 GiB
  bool prefix_cache = true;         // --no-prefix-cache turns reuse off entirely
  std::string eviction;             // "" = policy default; "lru" | "cost"
  std::string write_policy;         // "" = policy default; "write-through" | "write-back"
  int64_t min_promote_tokens = 32;  // optimized: shorter host/disk hits are recomputed
  double session_ttl_s = 120;       // optimized: retention of tool-waiting sessions
  double fairness_s = 2.0;          // optimized: max extra wait cache-aware ordering may impose
  std::string model_name;           // served name; "" = file stem
  std::string kv_events;            // ZMQ PUB endpoint for KV events ("" = none)
  std::string kv_events_replay;     // ZMQ ROUTER replay endpoint ("" = none)
  std::string kv_events_topic;      // first frame of every KV event message
  // KV hints and quotas (docs/kv-cache.md "KV hints", "Quotas and fair share").
  int64_t kv_pin_budget_bytes = -1;            // --kv-pin-budget; -1 = the cache's default
  int64_t kv_retain_budget_bytes = -1;         // --kv-retain-budget; -1 = the cache's default
  uint64_t kv_session_quota_device_bytes = 0;  // --kv-session-quota-device; 0 = none
  uint64_t kv_session_quota_host_bytes = 0;    // --kv-session-quota-host; 0 = none
  bool kv_fair_share = false;                  // --kv-fair-share
  int64_t kv_max_sessions = 65536;             // --kv-max-sessions: session names tracked (LRU)
  double kv_session_idle_s = 3600;             // --kv-session-idle: unused names forgotten after; 0 = never
  SpecConfig spec;                             // speculative decoding (--spec*); off by default
  double kv_debug_load_delay_s = 0;            // fault injection: each KV promotion waits this long (slow tier)
  // Remote KV tier in Redis/Valkey (docs/kv-cache.md "Remote tier").
  std::string kv_remote;               // --kv-remote redis://HOST:PORT[/DB]; "" = none
  double kv_remote_ttl_s = 3600;       // --kv-remote-ttl; 0 = no expiry
  uint64_t kv_remote_bytes = 0;        // --kv-remote-size: bytes this process may store; 0 = no budget of its own
  double kv_remote_timeout_s = 0.05;   // --kv-remote-timeout-ms: how long a request waits for its lookup
  std::string kv_remote_password;      // AUTH password (file / env), in place of the URL's; never printed
  std::string kv_remote_secret;        // --kv-remote-secret-file: HMAC key of remote values; "" = none
  bool kv_events_tokens = true;        // --kv-events-tokens: BlockStored carries token ids (off: hashes only)
  std::string kv_events_curve_secret;  // Z85 CURVE secret key of the KV-event sockets; "" = plain ZMQ
  // --kv-hash-secret-file / PROSGROW_KV_HASH_SECRET: the fleet secret keying
  // every block hash (kv/index/block_hash.h); "" = unkeyed hashes.
  std::string kv_hash_secret;
  // Where the forward pass runs and what memory it owns (backend.h): its
  // executor, the device tier's arena, the host tier's memory. Null = the CPU
  // (DefaultCpuBackend); --device cuda: the device backend.
  std::shared_ptr<const Backend> backend;
};

// The host and disk tiers' real sizes after the defaults above (0 = no such
// tier): what Engine::Create builds and what `prosgrow doctor` checks.
inline uint64_t HostTierBytes(const EngineConfig& c) {
  if (c.policy == ServePolicy::kBaseline) return 0;
  return c.kv_host_bytes == kDefaultHostTierBytes ? 4 * c.kv_device_bytes : c.kv_host_bytes;
}
inline uint64_t DiskTierBytes(const EngineConfig& c) {
  if (c.policy == ServePolicy::kBaseline || c.kv_disk_dir.empty()) return 0;
  return c.kv_disk_bytes ? c.kv_disk_bytes : 4ull << 30;
}

}  // namespace pg
