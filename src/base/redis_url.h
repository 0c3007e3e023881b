// RedisUrl: the `--kv-remote` URL, redis://[user[:password]@]HOST[:PORT][/DB],
// parsed once for both its users (the remote KV tier in src/kv and the Redis
// check of `prosgrow doctor`). Pure function; thread-safe.
#pragma once

#include <string>
#include <string_view>

#include "base/status.h"

namespace pg {

struct RedisUrl {
  std::string host;
  int port = 6379;
  int db = 0;
  std::string user;      // "" = the default user
  std::string password;  // "" = no AUTH
};

// InvalidArgument naming --kv-remote and the URL (its password redacted)
// when it is not of that form (another scheme, no host, a port outside
// 1..65535, a non-numeric database). "user@" alone names an ACL user whose
// password comes from elsewhere (--kv-remote-password-file).
Result<RedisUrl> ParseRedisUrl(const std::string& url);

// The URL with any password replaced by "***" (redis://user:***@host:port),
// for every message that names it.
std::string RedactRedisUrl(const std::string& url);

// A decimal TCP port in 1..65535 (the whole of `s`).
bool ParseTcpPort(std::string_view s, int* port);

}  // namespace pg
