#include "kv/accounting/session_usage.h"

#include <fmt/format.h>

namespace pg {

void SessionUsage::Add(int32_t session, int tier, int delta) {
  if (session < 0) return;
  if (size_t(session) >= per_.size()) per_.resize(size_t(session) + 1, {0, 0});
  int64_t& n = per_[size_t(session)][size_t(tier)];
  if (n == 0 && delta > 0) ++active_[tier];
  n += delta;
  if (n == 0 && delta < 0) --active_[tier];
}

void SessionUsage::Update(uint32_t id, const IndexEntry& e) {
  if (id >= counted_.size()) counted_.resize(size_t(id) + 1);
  Counted& c = counted_[id];
  uint8_t mask = 0;
  if (e.live) {
    for (int t : {kDeviceTier, kHostTier})
      if (e.in_tier(t)) mask |= uint8_t(1u << t);
  }
  const int32_t session = e.live ? e.session : -1;
  if (mask == c.mask && session == c.session) return;
  for (int t : {kDeviceTier, kHostTier}) {
    if (c.mask & (1u << t)) Add(c.session, t, -1);
    if (mask & (1u << t)) Add(session, t, +1);
  }
  c = Counted{session, mask};
}

int64_t SessionUsage::blocks(int32_t session, int tier) const {
  if (session < 0 || size_t(session) >= per_.size()) return 0;
  return per_[size_t(session)][size_t(tier)];
}

int64_t SessionUsage::fair_share(int tier) const {
  return active_[tier] <= 1 ? capacity_[tier] : capacity_[tier] / active_[tier];
}

int32_t SessionUsage::Heaviest(int tier) const {
  const int64_t fair = fair_share(tier);
  int32_t best = -1;
  int64_t best_n = fair;
  for (size_t s = 0; s < per_.size(); ++s) {
    if (per_[s][size_t(tier)] > best_n) best = int32_t(s), best_n = per_[s][size_t(tier)];
  }
  return best;
}

Status SessionUsage::CheckIntegrity(const PrefixIndex& index) const {
  std::vector<std::array<int64_t, 2>> recount(per_.size(), {0, 0});
  for (uint32_t id = 0; id < index.id_limit(); ++id) {
    const IndexEntry& e = index.at(id);
    if (!e.live || e.session < 0) continue;
    if (size_t(e.session) >= recount.size()) {
      return Internal(fmt::format("session usage: session {} never counted", e.session));
    }
    for (int t : {kDeviceTier, kHostTier})
      if (e.in_tier(t)) recount[size_t(e.session)][size_t(t)]++;
  }
  for (size_t s = 0; s < per_.size(); ++s) {
    for (int t : {kDeviceTier, kHostTier}) {
      if (recount[s][size_t(t)] != per_[s][size_t(t)]) {
        return Internal(fmt::format("session usage: session {} holds {} {} blocks, counted {}", s,
                                    recount[s][size_t(t)], TierName(t), per_[s][size_t(t)]));
      }
    }
  }
  return Status::Ok();
}

}  // namespace pg
