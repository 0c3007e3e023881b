#include "engine/kv_hint_config.h"

#include <fmt/format.h>

#include "base/units.h"

namespace pg {
namespace {

// bytes -> blocks; -1 stays -1 (the default). A size that holds no block is an error naming the flag.
Result<int64_t> Blocks(int64_t bytes, size_t block_bytes, const char* flag) {
  if (bytes < 0) return int64_t{-1};
  if (bytes > 0 && uint64_t(bytes) < block_bytes) {
    return InvalidArgument(
        fmt::format("{} {} holds no KV block of {}", flag, FormatBytes(uint64_t(bytes)), FormatBytes(block_bytes)));
  }
  return int64_t(uint64_t(bytes) / block_bytes);
}

}  // namespace

Status ApplyKvHintConfig(const EngineConfig& c, size_t block_bytes, KvCacheConfig* kc) {
  PG_ASSIGN_OR_RETURN(kc->pin_budget_blocks, Blocks(c.kv_pin_budget_bytes, block_bytes, "--kv-pin-budget"));
  PG_ASSIGN_OR_RETURN(kc->retain_budget_blocks, Blocks(c.kv_retain_budget_bytes, block_bytes, "--kv-retain-budget"));
  PG_ASSIGN_OR_RETURN(kc->session_quota_device_blocks,
                      Blocks(int64_t(c.kv_session_quota_device_bytes), block_bytes, "--kv-session-quota-device"));
  PG_ASSIGN_OR_RETURN(kc->session_quota_host_blocks,
                      Blocks(int64_t(c.kv_session_quota_host_bytes), block_bytes, "--kv-session-quota-host"));
  kc->fair_share = c.kv_fair_share;
  kc->max_sessions = c.kv_max_sessions;
  kc->session_idle_s = c.kv_session_idle_s;
  return Status::Ok();
}

}  // namespace pg
