// The engine flags shared by `generate` and `serve` (-m, --threads, --ctx-size,
// the --kv-* family, --policy, --attn ...), and their conversion to an EngineConfig.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "base/status.h"
#include "device_flag.h"
#include "engine/engine_config.h"

namespace pg {

// --spec* (speculative decoding), shared by generate, serve and bench-model.
struct SpecFlags {
  std::string spec = "none";
  std::string draft_model;
  int draft_max = 4;
  int max_batch = 0;
  std::string policy = "goodput";
  double synthetic_length = 0;
};
void AddSpecFlags(CLI::App& app, SpecFlags* f);
// One-line errors (unknown drafter, L outside [1, K + 1], ...).
Result<SpecConfig> ToSpecConfig(const SpecFlags& f);

struct EngineFlags {
  std::string model;
  std::string policy = "optimized";
  int threads = 0;
  int64_t ctx_size = 0;
  int64_t max_batch_tokens = 512;
  int64_t max_seqs = 16;
  int64_t prefill_slice = -1;           // -1 = EngineConfig's default
  int64_t long_prefill_threshold = -1;  // -1 = EngineConfig's default
  int64_t max_queue = 256;
  int64_t page_tokens = 16;
  std::string kv_dtype = "f16";
  std::string attn = "fast";
  std::string attn_sparse = "sparse";
  DeviceFlags device;  // --device, --device-prefill (device_flag.h)
  std::string kv_device_mem = "256MiB";
  std::string kv_host_mem;
  std::string kv_disk_dir;
  std::string kv_disk_size;
  std::string kv_eviction;
  std::string kv_write_policy;
  int64_t kv_min_promote = 32;
  bool no_prefix_cache = false;
  std::string kv_events;
  std::string kv_events_replay;
  std::string kv_events_topic;
  SpecFlags spec;
  double kv_debug_load_delay = 0;
  std::string kv_remote;
  double kv_remote_ttl = 3600;
  std::string kv_remote_size;
  double kv_remote_timeout_ms = 50;
  std::string kv_remote_password_file;      // else $PROSGROW_REDIS_PASSWORD, else the URL's
  std::string kv_remote_secret_file;        // HMAC key of the remote tier's values
  std::string kv_events_tokens = "auto";    // on | off | auto (serve: off when API keys are set)
  std::string kv_events_curve_secret_file;  // ZMQ CURVE server secret key (Z85), enables CURVE
  std::string kv_hash_secret_file;          // fleet secret keying block hashes; else $PROSGROW_KV_HASH_SECRET
};

void AddEngineFlags(CLI::App& app, EngineFlags* f);
// Validates the flags and resolves the model (the default model when -m is
// absent). One-line errors.
Result<EngineConfig> ToEngineConfig(const EngineFlags& f);

}  // namespace pg
