#include "kv/accounting/session_usage.h"

#include <fmt/format.h>

namespace pg {

void SessionUsage::Add(int32_t session, int tier, int delta) {
  if (session < 0) return;
  auto it = per_.try_emplace(session, std::array<int64_t, 2>{0, 0}).first;
  int64_t& n = it->second[size_t(tier)];
  if (n == 0 && delta > 0) ++active_[tier];
  n += delta;
  if (n == 0 && delta < 0) --active_[tier];
  if (it->second[0] == 0 && it->second[1] == 0) per_.erase(it);
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
  auto it = session < 0 ? per_.end() : per_.find(session);
  return it == per_.end() ? 0 : it->second[size_t(tier)];
}

int64_t SessionUsage::fair_share(int tier) const {
  return active_[tier] <= 1 ? capacity_[tier] : capacity_[tier] / active_[tier];
}

int32_t SessionUsage::Heaviest(int tier) const {
  const int64_t fair = fair_share(tier);
  int32_t best = -1;
  int64_t best_n = fair;
  for (const auto& [s, n] : per_) {
    // Ties go to the lower index (the older session), independent of the map's order.
    if (n[size_t(tier)] > best_n || (n[size_t(tier)] == best_n && best >= 0 && s < best))
      best = s, best_n = n[size_t(tier)];
  }
  return best;
}

Status SessionUsage::CheckIntegrity(const PrefixIndex& index) const {
  std::unordered_map<int32_t, std::array<int64_t, 2>> recount;
  for (uint32_t id = 0; id < index.id_limit(); ++id) {
    const IndexEntry& e = index.at(id);
    if (!e.live || e.session < 0) continue;
    for (int t : {kDeviceTier, kHostTier})
      if (e.in_tier(t)) recount.try_emplace(e.session, std::array<int64_t, 2>{0, 0}).first->second[size_t(t)]++;
  }
  if (recount.size() != per_.size()) {
    return Internal(fmt::format("session usage: {} sessions hold blocks, {} counted", recount.size(), per_.size()));
  }
  for (const auto& [s, n] : recount) {
    for (int t : {kDeviceTier, kHostTier}) {
      if (n[size_t(t)] != blocks(s, t)) {
        return Internal(fmt::format("session usage: session {} holds {} {} blocks, counted {}", s, n[size_t(t)],
                                    TierName(t), blocks(s, t)));
      }
    }
  }
  return Status::Ok();
}

}  // namespace pg
