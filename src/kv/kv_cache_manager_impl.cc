// KvCacheManager::Impl: the parts wired together, and the prefix lookups.
#include "kv/kv_cache_manager_impl.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "base/check.h"
#include "base/clock.h"
#include "base/log.h"

namespace pg {

namespace {
std::function<double()> ClockOrNow(std::function<double()> clock) {
  if (clock) return clock;
  return [] { return NowSeconds(); };
}
}  // namespace

KvCacheManager::Impl::Impl(KvCacheConfig config)
    : cfg_(std::move(config)),
      page_(cfg_.layout.page_tokens),
      retention_(ClockOrNow(cfg_.clock), cfg_.default_session_ttl_s),
      clock_(retention_) {}

Status KvCacheManager::Impl::Init() {
  PG_RETURN_IF_ERROR(store_.Open(cfg_));
  if (cfg_.eviction == EvictionKind::kLru)
    policy_ = std::make_unique<LruEviction>();
  else
    policy_ = std::make_unique<CostAwareEviction>();
  retention_.SetSessionBounds(size_t(std::max<int64_t>(1, cfg_.max_sessions)), cfg_.session_idle_s);
  if (cfg_.fair_share) policy_ = std::make_unique<FairShareEviction>(std::move(policy_));
  mover_ = std::make_unique<TierMover>(store_, cfg_.io_threads);
  mover_->set_load_delay(cfg_.debug_load_delay_s);
  alloc_ = std::make_unique<TierAllocator>(store_, *mover_, *policy_, retention_, cfg_.write_policy);
  alloc_->TrimDisk();
  PG_RETURN_IF_ERROR(InitHints(cfg_, store_, retention_));
  hints_ = std::make_unique<PrefixHints>(store_, *alloc_, retention_);
  hints_->SetQuotas(cfg_.session_quota_device_blocks, cfg_.session_quota_host_blocks);
  seqs_ = std::make_unique<SequenceTable>(cfg_, store_, *alloc_, *mover_, *hints_, clock_);
  remote_ = std::make_unique<RemoteLookups>(cfg_, store_, *alloc_, *mover_, clock_);
  return Status::Ok();
}

void KvCacheManager::Impl::Tick() {
  seqs_->ProcessCompletions();
  remote_->Import();
  retention_.Expire();
  alloc_->CleanInBackground();
}

Status KvCacheManager::Impl::Flush() {
  Status st = alloc_->Flush();
  // The remote tier's queued writes, so that another replica finds them (bounded wait).
  if (store_.remote() != nullptr && !store_.remote()->DrainWrites(2.0))
    PG_LOG_WARN("kv remote tier: shutting down with writes still queued; they are dropped");
  return st;
}

CacheCounters KvCacheManager::Impl::Counters() const {
  CacheCounters c = store_.Snapshot();
  c.remote = remote_->Snapshot();
  c.sessions = int64_t(retention_.sessions());
  c.forgotten_sessions = retention_.forgotten_sessions();
  return c;
}

// ---------------------------------------------------------------- lookups

// The tier each block of `chain` would be served from, while every block has
// a usable copy; cut at the first slow (host/disk) block when the slow part
// is shorter than min_promote_tokens (*stop = kShortHit).
std::vector<Tier> KvCacheManager::Impl::UsableTiers(std::span<const uint32_t> chain, MatchStop* stop) {
  std::vector<Tier> tiers;
  int64_t first_slow = -1;
  for (uint32_t id : chain) {
    const IndexEntry& e = store_.index().at(id);
    const TierCopy& dev = e.copy(kDeviceTier);
    if (dev.held() && !dev.ready) break;  // a load into the device is in flight for another sequence
    const int tier = e.first_usable();
    if (tier == kNoTier) break;
    if (tier != kDeviceTier && first_slow < 0) first_slow = int64_t(tiers.size());
    tiers.push_back(Tier(tier));
  }
  const int64_t n_slow = int64_t(tiers.size()) - std::count(tiers.begin(), tiers.end(), kDeviceTier);
  if (n_slow > 0 && n_slow * page_ < cfg_.min_promote_tokens) {
    tiers.resize(size_t(first_slow));  // not worth moving: recompute from the first slow block
    *stop = MatchStop::kShortHit;
    store_.counters().skipped_short_hits++;
  }
  return tiers;
}

PrefixMatch KvCacheManager::Impl::Match(std::span<const int32_t> tokens, const CacheRequest& request,
                                        KvCacheManager* owner) {
  hints_->SettlePrefetches();  // KV hints: a prefetched prefix is matched on the device
  seqs_->ProcessCompletions();
  PrefixMatch m;
  m.session_ = retention_.Index(request.session);
  if (!cfg_.prefix_cache || !request.use_prefix_cache) {
    m.stop_ = MatchStop::kNoCache;
    return m;
  }
  m.eligible_ = true;
  m.root_ = RootHash(cfg_.model_identity, request.salt, cfg_.hash_key);
  const int64_t max_blocks = tokens.empty() ? 0 : int64_t(tokens.size() - 1) / page_;
  PrefixIndex& index = store_.index();
  std::vector<uint32_t> chain;
  index.MatchChain(m.root_, tokens, page_, max_blocks, cfg_.hash_key, &chain);

  const std::vector<Tier> tiers = UsableTiers(chain, &m.stop_);
  CacheCounters& c = store_.counters();
  clock_.Advance();
  for (size_t i = 0; i < tiers.size(); ++i) {
    const uint32_t id = chain[i];
    IndexEntry& e = index.at(id);
    e.locks++;
    match_locks_++;
    clock_.Touch(e, m.session_);
    store_.RefreshEntry(id);
    m.entries_.push_back(id);
    m[tiers[i]] += page_;
  }
  m.owner_ = owner;
  c.lookups++;
  c.lookup_tokens += int64_t(tokens.size());
  int64_t missed = max_blocks;  // blocks found in no tier down to t: a hit in t is a miss in every tier above
  for (int t = 0; t < kLocalTiers; ++t) {
    c.tiers[t].hit_blocks += m[t] / page_;
    c.tiers[t].hit_tokens += m[t];
    missed -= m[t] / page_;
    c.tiers[t].miss_blocks += missed;
  }
  return m;
}

void KvCacheManager::Impl::ReleaseMatch(PrefixMatch* m) {
  for (uint32_t id : m->entries_) {
    IndexEntry& e = store_.index().at(id);
    PG_CHECK(e.locks > 0);
    e.locks--;
    match_locks_--;
    store_.RefreshEntry(id);
    store_.MaybeErase(id);
  }
  m->entries_.clear();
}

void KvCacheManager::Impl::ExplainMisses(PrefixMatch* m, std::span<const int32_t> tokens) {
  m->explain_ = store_.accounting().Explain(store_.index(), m->root_, m->entries_, tokens, m->stop_,
                                            [this](const BlockHash& h) { return hints_->DroppedByPolicy(h); });
}

void KvCacheManager::Impl::LimitMatch(PrefixMatch* m, int64_t max_tokens) {
  const size_t keep = size_t(std::max<int64_t>(0, max_tokens) / page_);
  if (keep >= m->entries_.size()) return;
  for (size_t i = keep; i < m->entries_.size(); ++i) {
    IndexEntry& e = store_.index().at(m->entries_[i]);
    (*m)[SequenceTable::ServingTier(e)] -= page_;
    PG_CHECK(e.locks > 0);
    e.locks--;
    match_locks_--;
    store_.RefreshEntry(m->entries_[i]);
    store_.MaybeErase(m->entries_[i]);
  }
  m->entries_.resize(keep);
  m->stop_ = MatchStop::kPolicy;
}

}  // namespace pg
