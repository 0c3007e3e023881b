// Preflight: the deployment checklist `prosgrow doctor` prints and `prosgrow
// serve` runs before it loads anything. Both take the same plan (what the
// flags configure), run the same checks and print the same lines, so serve
// refuses to start on exactly the failures doctor reports, with the same
// message. Thread-safety: pure function of the plan and the host's state.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "doctor/check.h"
#include "engine/engine_config.h"

namespace pg {

struct PreflightPlan {
  std::string model_path;                   // resolved (the default model already made)
  const ModelSource* model_file = nullptr;  // model_path already opened, or null (opened here)
  uint64_t kv_device_bytes = 0;
  uint64_t kv_host_bytes = 0;  // the host tier's real size (0 = none)
  std::string kv_disk_dir;     // "" = no disk tier
  uint64_t kv_disk_bytes = 0;
  std::string http_host;  // "" = not serving HTTP (no port check)
  int http_port = 0;
  std::string kv_remote;           // redis://... ("" = no remote tier)
  std::string kv_remote_password;  // from --kv-remote-password-file / env, in place of the URL's ("" = the URL's)
  std::string kv_events;           // tcp://HOST:PORT ("" = no KV events)
  bool kv_hash_keyed = false;      // a fleet secret keys the block hashes (--kv-hash-secret-file)
  int64_t page_tokens = 16;        // the KV block's tokens (--page-tokens)
  bool kv_bf16 = false;            // --kv-bf16
  bool attn_precise = false;       // --attn precise (MLA latent rows in f32)
};

// The plan for an engine configuration (tier sizes after the defaults); the
// HTTP and remote/event fields are left for the caller.
PreflightPlan PlanFromConfig(const EngineConfig& config);

// In order: cpu, model, memory, kv cache (bytes per token), disk tier, redis, kv events, block hashes, http port.
std::vector<CheckResult> RunPreflight(const PreflightPlan& plan);

}  // namespace pg
