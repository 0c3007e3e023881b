// Router: `prosgrow route`, a small cache-aware router for single-host and
// test use. It follows every replica's KV events (ReplicaFeed ->
// ReplicaIndex), asks a replica to tokenize each chat/completions request
// (POST /tokenize), chooses a replica by cached prefix and load
// (RoutePolicy), keeps a session (X-Session-Id, `user`, Anthropic
// metadata.user_id) on its replica, and relays the answer as it streams.
//
// The front door is serve's (server/http/guarded_http_server.h): the same
// request limits, flags and 4xx answers, and bodies are parsed under the
// same JSON depth bound before anything is sent upstream. The replica's
// answer headers that clients rely on are relayed (RelayedHeader).
//
// Failover: a replica that refuses or drops the connection before answering
// is marked down and the request goes to the next best one (up to every
// replica once); the health checker (GET /health every 500 ms) brings it back.
// Its sessions continue elsewhere. A stream whose replica dies mid-stream is
// continued from another replica (StreamSplicer: OpenAI text and tool-call
// streams, Anthropic streams), or ended with an error event in the client's
// API's format when it cannot be.
//
// Bounds (docs/server.md, "Router limits"): the router keeps no client
// string. A session (or a Responses answer's id) is a 128-bit digest of the
// client's credentials and its name (AffinityTable), recorded only after a
// replica answered it 2xx; each table has a fixed number of fixed-size
// entries, and /metrics shows each table's entries, bytes and bound. Every
// upstream call has a time-to-first-byte and an idle deadline; a replica
// that misses one is taken out for --upstream-quarantine and the request
// moves on as on failover. A non-streamed answer is relayed only when it is
// at most --upstream-max-body-bytes of JSON with a valid status; otherwise
// the client gets a 502 in its API's shape. A previous_response_id goes to
// the replica that answered it.
//
// Thread-safety: Run() blocks on the HTTP server; Stop() from any thread.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "base/status.h"
#include "route/route_policy.h"
#include "server/http/server_options.h"

namespace pg {

struct RouterOptions {
  std::string host = "127.0.0.1";
  int port = 8090;                    // 0 = ephemeral (port() reports it)
  std::vector<std::string> replicas;  // http://HOST:PORT
  RouteMode mode = RouteMode::kCacheAware;
  std::string api_key;  // sent to the replicas for /kv-events and /tokenize
  // The replicas' Z85 CURVE public key (serve --kv-events-curve-secret-file);
  // "" = the key each replica's /kv-events reports (or plain ZMQ).
  std::string kv_events_curve_server_key;
  size_t max_sessions = 65536;                // session affinities kept (LRU), AffinityTable::kEntryBytes each
  size_t max_responses = 65536;               // Responses answer ids kept (LRU), for previous_response_id
  size_t max_index_blocks = size_t{1} << 20;  // KV blocks indexed per replica (ReplicaIndex)
  double upstream_ttfb_timeout_s = 300;       // a replica's status line must come within this
  double upstream_idle_timeout_s = 120;       // ... and then no silence longer than this
  double upstream_quarantine_s = 30;          // a replica that missed a deadline stays out this long
  int64_t upstream_max_body_bytes = int64_t{64} << 20;  // largest non-streamed answer relayed (else 502)
  // The front door's workers, timeouts and request limits (serve's flags,
  // AddServerLimitFlags); host and port above override its own.
  ServerOptions front = [] {
    ServerOptions o;
    o.threads = 64;
    return o;
  }();

  // Checks the router's own ranges (the message names the flag).
  Status Validate() const;
};

// Whether a replica's response header reaches the client: request ids
// (x-request-id, request-id), retry-after, x-prosgrow-*, the rate-limit and
// API headers (x-ratelimit-*, anthropic-*, openai-*), www-authenticate,
// allow, and a stream's cache-control and x-accel-buffering. Never the
// framing (content-length, transfer-encoding, connection).
bool RelayedHeader(const std::string& name);

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
