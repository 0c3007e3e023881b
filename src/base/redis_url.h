// RedisUrl: the `--kv-remote` URL, redis://[[user]:password@]HOST[:PORT][/DB],
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

// InvalidArgument naming --kv-remote and the URL when it is not of that form
// (another scheme, no host, a port outside 1..65535, a non-numeric database,
// credentials without the ':').
Result<RedisUrl> ParseRedisUrl(const std::string& url);

// A decimal TCP port in 1..65535 (the whole of `s`).
bool ParseTcpPort(std::string_view s, int* port);

}  // namespace pg
