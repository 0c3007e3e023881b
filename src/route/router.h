// Router: `prosgrow route`, a small cache-aware router for single-host and
// test use. It follows every replica's KV events (ReplicaFeed ->
// ReplicaIndex), asks a replica to tokenize each chat/completions request
// (POST /tokenize), chooses a replica by cached prefix and load
// (RoutePolicy), keeps a session (X-Session-Id, `user`, Anthropic
// metadata.user_id) on its replica, and relays the answer as it streams.
//
// Failover: a replica that refuses or drops the connection before answering
// is marked down and the request goes to the next best one (up to every
// replica once); the health checker (GET /health every 500 ms) brings it back.
// Its sessions continue elsewhere.
//
// Thread-safety: Run() blocks on the HTTP server; Stop() from any thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "route/route_policy.h"

namespace pg {

struct RouterOptions {
  std::string host = "127.0.0.1";
  int port = 8090;                    // 0 = ephemeral (port() reports it)
  std::vector<std::string> replicas;  // http://HOST:PORT
  RouteMode mode = RouteMode::kCacheAware;
  std::string api_key;                // sent to the replicas for /kv-events
  // The replicas' Z85 CURVE public key (serve --kv-events-curve-secret-file);
  // "" = the key each replica's /kv-events reports (or plain ZMQ).
  std::string kv_events_curve_server_key;
  int http_threads = 64;
  size_t max_sessions = 65536;        // session affinities kept (LRU)
};

class Router {
 public:
  static Result<std::unique_ptr<Router>> Create(RouterOptions options);
  ~Router();
  Status Run();  // until Stop()
  void Stop();
  int port() const;

  struct Impl;

 private:
  explicit Router(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace pg
