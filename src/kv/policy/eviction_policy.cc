#include "kv/policy/eviction_policy.h"

#include <algorithm>
#include <cmath>
#include <tuple>

namespace pg {

bool EvictionPolicy::Dirty(const IndexEntry& e, int tier, const EvictionContext& ctx) {
  const int below = ctx.tiers.write_below(tier);
  return below != kNoTier && !e.copy(below).usable();
}

bool EvictionPolicy::HoldExcludes(BlockHold hold, const IndexEntry&, int tier) {
  return tier != kDeviceTier && (hold == BlockHold::kRetained || hold == BlockHold::kPinned);
}

uint32_t EvictionPolicy::PickVictim(int tier, bool need_clean, const EvictionContext& ctx) const {
  const auto& set = ctx.index.evictable(tier);
  const double now = ctx.retention.now();
  const int32_t preferred = Preferred(tier, ctx);
  // (hold, not the preferred session, breaks a chain, value): smallest goes.
  using Key = std::tuple<int, int, int, double>;
  uint32_t best = PrefixIndex::kNone;
  Key best_key{};
  int seen = 0, skipped = 0;
  for (auto it = set.begin(); it != set.end() && seen < candidates(); ++it) {
    const IndexEntry& e = ctx.index.at(it->id);
    const BlockHold hold = ctx.retention.HoldOf(e.session, e.hash);
    if (HoldExcludes(hold, e, tier)) {
      if (++skipped > kMaxHeldSkip) break;
      continue;
    }
    const int rank_age = seen++;
    if (need_clean && Dirty(e, tier, ctx)) continue;
    const int other = preferred >= 0 && e.session != preferred ? 1 : 0;
    const Rank r = RankOf(e, tier, rank_age, now, ctx);
    const Key k{int(hold), other, r.breaks_chain, r.value};
    if (best == PrefixIndex::kNone || k < best_key) best = it->id, best_key = k;
    if (oldest_wins() && hold == BlockHold::kNone) break;
  }
  return best;
}

int32_t FairShareEviction::Preferred(int tier, const EvictionContext& ctx) const {
  if (ctx.usage == nullptr || tier == kDiskTier) return -1;
  return ctx.usage->Heaviest(tier);
}

double CostAwareEviction::RecomputeCost(int32_t depth, int page_tokens) {
  const double page = page_tokens;
  return page * (1.0 + (double(depth) * page + page / 2) / kAttentionTokens);
}

double CostAwareEviction::ReloadAfterEviction(const IndexEntry& e, int tier, const EvictionContext& ctx) {
  const int below = ctx.tiers.write_below(tier);
  for (int t = 0; t < kLocalTiers; ++t) {
    if (t != tier && (e.copy(t).held() || t == below)) return kReloadPerToken[size_t(t)] * ctx.page_tokens;
  }
  return -1;  // no copy would remain
}

EvictionPolicy::Rank CostAwareEviction::RankOf(const IndexEntry& e, int tier, int, double now,
                                               const EvictionContext& ctx) const {
  const double page = ctx.page_tokens;
  double after = ReloadAfterEviction(e, tier, ctx);
  const bool lost = after < 0;
  if (lost) after = RecomputeCost(e.depth, ctx.page_tokens);
  const double before = kReloadPerToken[size_t(tier)] * page;
  const double loss = std::max(after - before, 0.0) + 1e-3 * page;
  const double age = std::max(0.0, now - e.last_use_s);
  const double weight = (1.0 + std::log2(1.0 + e.uses)) / (1.0 + age / kRecencyScaleS);
  const int breaks_chain = lost && ctx.index.children_any(e.hash) > 0 ? 1 : 0;
  return Rank{breaks_chain, loss * weight};
}

}  // namespace pg
