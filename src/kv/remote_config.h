// RemoteTierConfig: the remote KV tier's settings (kv/remote_tier.h), part
// of KvCacheConfig. Plain value type.
#pragma once

#include <cstdint>
#include <string>

namespace pg {

struct RemoteTierConfig {
  std::string url;                   // --kv-remote redis://HOST:PORT[/DB]; "" = no remote tier
  double ttl_s = 3600;               // --kv-remote-ttl; 0 = no expiry
  uint64_t max_bytes = 0;            // --kv-remote-size; 0 = no budget of our own
  double timeout_s = 0.05;           // --kv-remote-timeout-ms: deadline of one lookup
  double write_timeout_s = 1.0;      // deadline of one batch of writes
  int64_t write_queue_blocks = 256;  // writes waiting at most (each holds a block's bytes)
  double retry_after_s = 1.0;        // after an error, Redis is skipped this long
  // --kv-remote-password-file / PROSGROW_REDIS_PASSWORD: AUTH password, in
  // place of one in the URL; "" = the URL's (if any). Never printed.
  std::string password;
  // --kv-remote-secret-file: HMAC key of every value (remote_codec.h); "" =
  // values unauthenticated (serve warns: the tier trusts every Redis writer).
  std::string secret;
};

}  // namespace pg
