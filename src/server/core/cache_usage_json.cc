#include "server/core/cache_usage_json.h"

namespace pg {

using json = nlohmann::json;

json CachedByTierJson(const TierTokens& t) {
  json j = json::object();
  for (int tier = 0; tier < kNumTiers; ++tier) j[TierName(tier)] = t[tier];
  return j;
}

json MissReasonsJson(const MissReasons& m) {
  json j = {{"never_seen", m.never_seen}, {"evicted", m.evicted}, {"diverged", m.diverged},
            {"loading", m.loading},       {"policy", m.policy},   {"evicted_by_tier", json::object()}};
  for (int t = 0; t < kLocalTiers; ++t) j["evicted_by_tier"][TierName(t)] = m.evicted_by_tier[t];
  if (m.evicted_age_s >= 0) j["evicted_seconds_ago"] = m.evicted_age_s;
  return j;
}

}  // namespace pg
