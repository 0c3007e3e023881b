// ReplicaFeed: keeps one replica's ReplicaIndex current from its KV events.
// It learns the event endpoints from the replica itself (GET /kv-events),
// and follows them only when they are the replica's own (EndpointOfReplica),
// subscribes (ZMQ SUB), loads the history from the replay endpoint, then
// applies live batches in sequence order. A sequence gap replays the missing
// batches (or, without a replay endpoint, clears the index: a router that
// under-estimates a cache only routes worse, one that over-estimates routes
// wrong); a sequence that restarts from 0 is a restarted replica, whose
// first batch clears the index itself. When the replica cannot be reached
// the index is cleared and discovery retried every second.
//
// CURVE: when /kv-events (behind the replica's API key) names a
// curve_public_key, or the router was given one (`route
// --kv-events-curve-server-key`, which then must match), both sockets are
// CURVE clients of that key with a fresh key pair of their own.
//
// Thread-safety: one background thread per feed; the counters are atomics.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>

#include "route/replica_index.h"

namespace pg {

class ReplicaFeed {
 public:
  // `base_url`: http://HOST:PORT of the replica; `api_key` for its /kv-events.
  // `curve_server_key`: the replicas' Z85 CURVE public key ("" = whatever
  // /kv-events reports, or plain ZMQ when it reports none).
  ReplicaFeed(std::string base_url, std::string api_key, ReplicaIndex* index, std::string curve_server_key = "");
  ~ReplicaFeed();  // stops and joins the thread

  bool subscribed() const { return subscribed_.load(); }
  uint64_t batches() const { return batches_.load(); }
  uint64_t gaps() const { return gaps_.load(); }

 private:
  void Run();
  // One subscription's life: returns when the replica stops answering or on stop.
  void Follow(const std::string& endpoint, const std::string& replay_endpoint, const std::string& curve_key);

  std::string base_url_, api_key_, curve_server_key_;
  ReplicaIndex* index_;
  std::atomic<bool> stop_{false};
  std::atomic<bool> subscribed_{false};
  bool warned_foreign_ = false;  // said once that the advertised endpoint is not the replica's (feed thread only)
  std::atomic<uint64_t> batches_{0}, gaps_{0};
  std::thread thread_;
};

// "tcp://*:5557" as seen from a client of `base_url` (http://HOST:PORT):
// a wildcard or 0.0.0.0 host becomes HOST.
std::string ResolveEventEndpoint(const std::string& endpoint, const std::string& base_url);

// Whether a resolved event endpoint belongs to the replica at `base_url`:
// tcp:// on the replica's own host (any port), or ipc:// when the replica is
// on this machine (127.0.0.1, localhost, ::1). The router follows no other:
// a replica cannot point it at another machine's events.
bool EndpointOfReplica(const std::string& endpoint, const std::string& base_url);

}  // namespace pg
