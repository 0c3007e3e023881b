// Checks of the network endpoints a deployment depends on: the Redis/Valkey
// remote KV tier (reachable, and whether its memory policy suits a cache)
// and the TCP endpoints the server binds (the HTTP port, the ZMQ KV-event
// endpoint). Each check connects or binds once, with a short timeout, and
// releases what it opened. Thread-safety: pure functions of their arguments.
#pragma once

#include <string>

#include "base/redis_url.h"
#include "base/status.h"
#include "doctor/check.h"

namespace pg {

// Skip when `url` is empty. Fails when the URL is malformed or the server
// does not answer PING within `timeout_s`; warns when its maxmemory-policy
// refuses writes when full (noeviction), when maxmemory is 0 (unbounded),
// or when CONFIG cannot be read. A non-empty `password` (the server's
// --kv-remote-password-file / PROSGROW_REDIS_PASSWORD) replaces the URL's for AUTH.
CheckResult CheckRedis(const std::string& url, double timeout_s = 1.0, const std::string& password = "");

// "tcp://HOST:PORT" ("*" or "0.0.0.0" = every interface).
struct TcpEndpoint {
  std::string host;
  int port = 0;
};
Result<TcpEndpoint> ParseTcpEndpoint(const std::string& endpoint);

// Whether HOST:PORT can be bound now with the options the server that will
// bind it sets: SO_REUSEADDR, plus SO_REUSEPORT when `reuse_port` (cpp-httplib
// sets both, so a port whose last server's connections are in TIME_WAIT
// binds; ZMQ sets only the first). `name` labels the line ("http port",
// "kv events"). Port 0 always binds.
CheckResult CheckBindable(const std::string& name, const std::string& host, int port, const std::string& flag,
                          bool reuse_port = false);

}  // namespace pg
