// RoutePolicy: which replica gets a request. Pure decision over a snapshot
// of the replicas, so it is tested alone.
//   kCacheAware  the healthy replica holding the longest cached prefix of the
//                prompt (tokens in any tier; the device-tier run breaks
//                ties), unless it is much busier than the least busy one:
//                each request already in flight there costs
//                `inflight_cost_tokens` of prefix. A session stays on its
//                replica (affinity) while that replica is healthy and no
//                other one holds a longer prefix by more than a block.
//                A new session (no home yet) also pays `session_cost_tokens`
//                per session already homed on a replica: sessions that share
//                a long prefix (one system prompt) spread over the replicas,
//                each of which then caches that prefix once, instead of all
//                piling onto the replica that cached it first.
//   kRoundRobin  the next healthy replica in turn (the baseline).
// Thread-safety: pure functions; RoundRobin's counter is the caller's.
#pragma once

#include <cstdint>
#include <vector>

namespace pg {

enum class RouteMode { kCacheAware, kRoundRobin };

struct ReplicaView {
  bool healthy = false;
  int64_t cached_tokens = 0;  // longest prefix held, any tier
  int64_t device_tokens = 0;  // leading run held in the device tier
  int64_t inflight = 0;       // requests the router has in flight there
  bool session_home = false;  // the request's session last went here
  int64_t sessions = 0;       // sessions whose home this replica is (ties go to the fewest)
};

struct RoutePolicyOptions {
  RouteMode mode = RouteMode::kCacheAware;
  int64_t inflight_cost_tokens = 512;
  int64_t session_cost_tokens = 512;
  int64_t block_size = 16;
};

// The chosen replica's index, or -1 when none is healthy. `turn` is the
// round-robin counter (incremented on use).
int ChooseReplica(const std::vector<ReplicaView>& replicas, const RoutePolicyOptions& o, uint64_t* turn);

}  // namespace pg
