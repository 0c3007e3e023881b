#include "kv/prefix_hints.h"

#include <fmt/format.h>

#include "kv/policy/eviction_policy.h"

namespace pg {

Status InitHints(const KvCacheConfig& cfg, const TierStore& store, SessionRetention& retention) {
  if (cfg.session_quota_device_blocks < 0) return InvalidArgument("--kv-session-quota-device must be >= 0");
  if (cfg.session_quota_host_blocks < 0) return InvalidArgument("--kv-session-quota-host must be >= 0");
  if (cfg.session_quota_host_blocks > 0 && !store.host_enabled()) {
    return InvalidArgument("--kv-session-quota-host needs a host tier (--kv-host-mem)");
  }
  const int64_t host = store.host().capacity();
  const int64_t disk = store.disk_enabled() ? store.disk_capacity() : 0;
  // The defaults: a share of the tiers where holds are absolute (host, disk);
  // with neither, of the device, where a hold only orders the demotions.
  const int64_t lower = host + disk > 0 ? host + disk : store.device().capacity();
  int64_t pin = cfg.pin_budget_blocks;
  if (pin < 0) pin = (host > 0 ? host : lower) / 4;
  int64_t retain = cfg.retain_budget_blocks;
  if (retain < 0) retain = lower / 2;
  retention.SetBudget(BlockHold::kPinned, pin);
  retention.SetBudget(BlockHold::kRetained, retain);
  return Status::Ok();
}

int64_t PrefixHints::Hold(std::span<const uint32_t> chain, BlockHold kind, double ttl_s, std::string* refused) {
  int64_t n = 0;
  for (uint32_t id : chain) {
    if (!retention_.HoldBlock(store_.index().at(id).hash, kind, ttl_s)) {
      c_.refused_hints++;
      *refused = fmt::format("{} budget of {} blocks is full ({} of {} prefix blocks held)",
                             kind == BlockHold::kPinned ? "pin" : "retain", retention_.budget(kind), n, chain.size());
      break;
    }
    ++n;
  }
  (kind == BlockHold::kPinned ? c_.pinned_blocks : c_.retained_blocks) += n;
  return n;
}

bool PrefixHints::EvictEntry(uint32_t id, int tier, bool keep, bool* lost) {
  if (const uint64_t tag = alloc_.CopyDown(id, tier, true); tag != 0) alloc_.WaitFor(tag);
  const IndexEntry& e = store_.index().at(id);  // waits may have changed it
  if (!e.live || !e.copy(tier).usable() || (e.evictable_mask & (1u << tier)) == 0) return false;
  const bool lower = (e.held_mask() >> (tier + 1)) != 0;  // a copy in a tier below this one
  if (keep && !lower) return false;
  const BlockHash h = e.hash;
  store_.counters().tiers[tier].evictions++;
  store_.DropCopy(id, tier);
  const IndexEntry& after = store_.index().at(id);
  *lost = !after.live || !after.in_any_tier();
  if (*lost) RememberDropped(h);
  return true;
}

int64_t PrefixHints::Demote(std::span<const uint32_t> chain) {
  if (store_.tiers().write_below(kDeviceTier) == kNoTier) return 0;  // nowhere to put them
  int64_t n = 0;
  for (uint32_t id : chain) {
    const IndexEntry& e = store_.index().at(id);
    if (!e.live || (e.evictable_mask & (1u << kDeviceTier)) == 0) continue;  // not on the device, or in use
    bool lost = false;
    if (EvictEntry(id, kDeviceTier, true, &lost)) ++n;
  }
  c_.demoted_blocks += n;
  return n;
}

int64_t PrefixHints::Prefetch(std::span<const uint32_t> chain) {
  int64_t n = 0;
  for (uint32_t id : chain) {
    const IndexEntry& e = store_.index().at(id);
    if (e.copy(kDeviceTier).slot >= 0) continue;  // on the device, or already loading
    if (e.first_usable() == kNoTier) break;       // a write in flight: the chain would stop here anyway
    const int32_t slot = store_.device().Allocate();
    if (slot < 0) break;  // free device slots only
    prefetches_.push_back(alloc_.StartLoad(id, slot));
    store_.Unref(kDeviceTier, slot);  // the move's pin keeps it; the slot is cached once the load lands
    ++n;
  }
  c_.prefetched_blocks += n;
  return n;
}

void PrefixHints::SettlePrefetches() {
  for (uint64_t tag : prefetches_) alloc_.WaitFor(tag);
  prefetches_.clear();
}

uint32_t PrefixHints::OldestOf(int32_t session, int tier) const {
  const PrefixIndex& index = store_.index();
  for (const auto& key : index.evictable(tier)) {
    const IndexEntry& e = index.at(key.id);
    if (e.session != session) continue;
    if (EvictionPolicy::HoldExcludes(retention_.HoldOf(e.session, e.hash), e, tier)) continue;
    return key.id;
  }
  return PrefixIndex::kNone;
}

void PrefixHints::Enforce(int32_t session) {
  if (session < 0) return;
  for (int tier : {kDeviceTier, kHostTier}) {
    if (quota_[tier] <= 0) continue;
    while (store_.usage().blocks(session, tier) > quota_[tier]) {
      const uint32_t id = OldestOf(session, tier);
      if (id == PrefixIndex::kNone) break;  // the rest is in use or held
      bool lost = false;
      if (!EvictEntry(id, tier, false, &lost)) break;
      c_.quota_evictions++;
      c_.policy_dropped += lost ? 1 : 0;
    }
  }
}

void PrefixHints::RememberDropped(const BlockHash& h) {
  if (!ghosts_.insert(h).second) return;
  ghost_order_.push_back(h);
  if (ghost_order_.size() > kMaxPolicyGhosts) {
    ghosts_.erase(ghost_order_.front());
    ghost_order_.pop_front();
  }
}

HintCounters PrefixHints::counters() {
  HintCounters c = c_;
  c.live_retained = retention_.held(BlockHold::kRetained);
  c.live_pinned = retention_.held(BlockHold::kPinned);
  return c;
}

}  // namespace pg
