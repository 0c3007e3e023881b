#include "kv/eviction_policy.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace pg {

bool EvictionPolicy::Dirty(const IndexEntry& e, int tier, const EvictionContext& ctx) {
  if (tier == kDeviceTier) return ctx.host_enabled ? e.host.slot < 0 : (ctx.disk_writable && !e.disk.present);
  if (tier == kHostTier) return ctx.disk_writable && !e.disk.present;
  return false;
}

uint32_t EvictionPolicy::PickVictim(int tier, bool need_clean, const EvictionContext& ctx) const {
  const auto& set = ctx.index.evictable(tier);
  const double now = ctx.retention.now();
  using Key = std::tuple<int, int, double>;  // (retained, breaks a chain, value): smallest goes
  uint32_t best = PrefixIndex::kNone;
  Key best_key{};
  int seen = 0;
  for (auto it = set.begin(); it != set.end() && seen < kCandidates; ++it, ++seen) {
    const IndexEntry& e = ctx.index.at(it->id);
    if (need_clean && Dirty(e, tier, ctx)) continue;
    const int retained = ctx.retention.Retained(e.session) ? 1 : 0;
    const Rank r = RankOf(e, tier, seen, now, ctx);
    const Key k{retained, r.breaks_chain, r.value};
    if (best == PrefixIndex::kNone || k < best_key) best = it->id, best_key = k;
    if (oldest_wins() && !retained) break;
  }
  return best;
}

double CostAwareEviction::RecomputeCost(int32_t depth, int page_tokens) {
  const double page = page_tokens;
  return page * (1.0 + (double(depth) * page + page / 2) / kAttentionTokens);
}

double CostAwareEviction::ReloadAfterEviction(const IndexEntry& e, int tier, const EvictionContext& ctx) {
  const double page = ctx.page_tokens;
  const bool other_device = tier != kDeviceTier && e.device.slot >= 0;
  const bool other_host = tier != kHostTier && (e.host.slot >= 0 || (tier == kDeviceTier && ctx.host_enabled));
  const bool other_disk = tier != kDiskTier && (e.disk.present || e.disk.writing || ctx.disk_writable);
  if (other_device) return 0;
  if (other_host) return kHostReloadPerToken * page;
  if (other_disk) return kDiskReloadPerToken * page;
  return -1;  // no copy would remain
}

EvictionPolicy::Rank CostAwareEviction::RankOf(const IndexEntry& e, int tier, int, double now,
                                               const EvictionContext& ctx) const {
  const double page = ctx.page_tokens;
  double after = ReloadAfterEviction(e, tier, ctx);
  const bool lost = after < 0;
  if (lost) after = RecomputeCost(e.depth, ctx.page_tokens);
  const double before = tier == kDeviceTier ? 0 : tier == kHostTier ? kHostReloadPerToken * page : kDiskReloadPerToken * page;
  const double loss = std::max(after - before, 0.0) + 1e-3 * page;
  const double age = std::max(0.0, now - e.last_use_s);
  const double weight = (1.0 + std::log2(1.0 + e.uses)) / (1.0 + age / kRecencyScaleS);
  const int breaks_chain = lost && ctx.index.children_any(e.hash) > 0 ? 1 : 0;
  return Rank{breaks_chain, loss * weight};
}

}  // namespace pg
