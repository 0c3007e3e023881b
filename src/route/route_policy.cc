#include "route/route_policy.h"

namespace pg {

int ChooseReplica(const std::vector<ReplicaView>& r, const RoutePolicyOptions& o, uint64_t* turn) {
  const int n = static_cast<int>(r.size());
  if (o.mode == RouteMode::kRoundRobin) {
    for (int k = 0; k < n; ++k) {
      int i = static_cast<int>((*turn)++ % uint64_t(n));
      if (r[i].healthy) return i;
    }
    return -1;
  }
  int best = -1;
  int64_t best_score = 0;
  int64_t longest = 0;
  bool has_home = false;
  for (int i = 0; i < n; ++i) {
    if (r[i].healthy && r[i].cached_tokens > longest) longest = r[i].cached_tokens;
    has_home = has_home || (r[i].healthy && r[i].session_home);
  }
  for (int i = 0; i < n; ++i) {
    if (!r[i].healthy) continue;
    if (r[i].session_home && r[i].cached_tokens + o.block_size >= longest) return i;
    // Score: prefix tokens, device-resident ones counting a little more,
    // minus the queueing the replica's in-flight requests cost and, for a
    // session placed for the first time, the load its homed sessions bring.
    int64_t score = 4 * r[i].cached_tokens + r[i].device_tokens - 4 * o.inflight_cost_tokens * r[i].inflight;
    if (!has_home) score -= 4 * o.session_cost_tokens * r[i].sessions;
    if (best < 0 || score > best_score || (score == best_score && r[i].sessions < r[best].sessions)) {
      best = i;
      best_score = score;
    }
  }
  return best;
}

}  // namespace pg
