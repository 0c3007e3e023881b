// KvCacheManager::Impl: the sequence table and the verbs that fill it.
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
      retention_(ClockOrNow(cfg_.clock), cfg_.default_session_ttl_s) {}

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
  return Status::Ok();
}

void KvCacheManager::Impl::Touch(IndexEntry& e, int32_t session) {
  e.last_tick = tick_;
  e.last_use_s = retention_.now();
  e.uses++;
  if (session >= 0) e.session = session;
}

const KvCacheManager::Impl::Seq& KvCacheManager::Impl::seq(SeqId id) const {
  auto it = seqs_.find(id);
  PG_CHECK_MSG(it != seqs_.end(), "unknown sequence");
  return it->second;
}

int64_t KvCacheManager::Impl::CachedTokens(SeqId id) const {
  const Seq& s = seq(id);
  return s.settled ? s.cached_tokens : 0;
}

bool KvCacheManager::Impl::CanAppend(SeqId id, int64_t n_new) const {
  const Seq& s = seq(id);
  return CanAllocate(BlocksFor(s.n_tokens + n_new) - int64_t(s.table.size()));
}

void KvCacheManager::Impl::Tick() {
  ProcessCompletions();
  ImportRemoteBlocks();
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

bool KvCacheManager::Impl::DrainRemoteWrites(double timeout_s) {
  if (store_.remote() == nullptr) return true;
  WaitAll();  // write-behind copies still on the mover threads
  return store_.remote()->DrainWrites(timeout_s);
}

CacheCounters KvCacheManager::Impl::Counters() const {
  CacheCounters c = store_.Snapshot();
  c.remote = RemoteSnapshot();
  c.sessions = int64_t(retention_.sessions());
  c.forgotten_sessions = retention_.forgotten_sessions();
  return c;
}

void KvCacheManager::Impl::ProcessCompletions() {
  alloc_->Collect(false);
  SettleAll();
}

void KvCacheManager::Impl::OpenForKernels(const Seq& s, size_t from) {
  for (size_t i = from; i < s.table.size(); ++i) store_.device().arena().OpenForKernels(s.table[i]);
}

void KvCacheManager::Impl::CloseForKernels(const Seq& s, size_t from) {
  for (size_t i = from; i < s.table.size(); ++i) store_.device().arena().CloseForKernels(s.table[i]);
}

int32_t KvCacheManager::Impl::AllocDeviceSlot() {
  const int32_t slot = alloc_->AllocDeviceSlot();
  PG_CHECK_MSG(slot >= 0, "device slot vanished between CanAllocate and allocation");
  return slot;
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
    Tier tier;
    if (e.device.usable())
      tier = kDeviceTier;
    else if (e.device.slot >= 0)
      break;  // a load into the device is in flight for another sequence
    else if (e.host.usable())
      tier = kHostTier;
    else if (e.disk.present)
      tier = kDiskTier;
    else
      break;
    if (tier != kDeviceTier && first_slow < 0) first_slow = int64_t(tiers.size());
    tiers.push_back(tier);
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
  ProcessCompletions();
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
  ++tick_;
  for (size_t i = 0; i < tiers.size(); ++i) {
    const uint32_t id = chain[i];
    IndexEntry& e = index.at(id);
    e.locks++;
    match_locks_++;
    Touch(e, m.session_);
    store_.RefreshEntry(id);
    m.entries_.push_back(id);
    m[tiers[i]] += page_;
  }
  m.owner_ = owner;
  c.lookups++;
  c.lookup_tokens += int64_t(tokens.size());
  int64_t missed = max_blocks;  // blocks found in no tier down to t: a hit in t is a miss in every tier above
  for (int t = 0; t < kLocalTiers; ++t) {
    c.of_tier(t).hit_blocks += m[t] / page_;
    c.of_tier(t).hit_tokens += m[t];
    missed -= m[t] / page_;
    c.of_tier(t).miss_blocks += missed;
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
    (*m)[e.device.usable() ? kDeviceTier : e.host.usable() ? kHostTier : kDiskTier] -= page_;
    PG_CHECK(e.locks > 0);
    e.locks--;
    match_locks_--;
    store_.RefreshEntry(m->entries_[i]);
    store_.MaybeErase(m->entries_[i]);
  }
  m->entries_.resize(keep);
  m->stop_ = MatchStop::kPolicy;
}

// ---------------------------------------------------------------- sequences

Status KvCacheManager::Impl::AllocateSequence(SeqId id, PrefixMatch&& match, int64_t total_tokens,
                                              std::vector<BlockId>* table) {
  ProcessCompletions();
  PG_CHECK_MSG(seqs_.find(id) == seqs_.end(), "AllocateSequence: sequence id already allocated");
  if (total_tokens < match.tokens() || total_tokens < 0) {
    return InvalidArgument(fmt::format("AllocateSequence: {} tokens < matched {}", total_tokens, match.tokens()));
  }
  const int64_t n_blocks = BlocksFor(total_tokens);
  const int64_t need = n_blocks - match.device_tokens / page_;
  if (!CanAllocate(need)) {
    match.Release();
    return ResourceExhausted(fmt::format("kv device tier: {} blocks needed, {} free or evictable", need,
                                         store_.device().n_free() + alloc_->EvictableDevice()));
  }
  alloc_->PrepareDeviceRoom(need);
  Seq s;
  s.n_tokens = total_tokens;
  s.root = match.root_;
  s.eligible = match.eligible_;
  s.session = match.session_;
  s.table.reserve(size_t(n_blocks));
  if (match.explain_.valid) {
    store_.accounting().Count(match.explain_);
    s.miss = match.explain_.miss;
    s.explained = true;
  }
  std::vector<std::pair<uint32_t, int32_t>> loads;  // (host/disk hit, its device slot)
  for (uint32_t eid : match.entries_) {
    IndexEntry& e = store_.index().at(eid);
    store_.accounting().NoteReused(e.hash, e.device.usable() ? kDeviceTier : e.host.usable() ? kHostTier : kDiskTier);
    s.hashes.push_back(e.hash);
    s.matched.push_back(eid);
    if (e.device.usable()) {
      store_.device().Ref(e.device.slot);
      s.table.push_back(e.device.slot);
      // A copy brought in from Redis counts as tier remote once, by its first reuse.
      s.matched_tier.push_back(e.device.filled_from == kRemoteTier ? kRemoteTier : kDeviceTier);
      e.device.filled_from = kDeviceTier;
      continue;
    }
    const Tier tier = e.host.usable() ? kHostTier : kDiskTier;
    const int32_t slot = AllocDeviceSlot();
    s.table.push_back(slot);  // the sequence's reference (refcount 1 from Allocate)
    s.matched_tier.push_back(tier);
    loads.emplace_back(eid, slot);
  }
  while (int64_t(s.table.size()) < n_blocks) s.table.push_back(AllocDeviceSlot());
  // Loads start once every slot is had. A slot's eviction may wait for a copy
  // to host; that copy runs in the mover's store lane, apart from every load
  // (TierMover), so no load, of this sequence or another, delays it.
  for (const auto& [eid, slot] : loads) {
    alloc_->StartLoad(eid, slot);
    s.loading.push_back(eid);
    store_.index().at(eid).locks++;  // held until the sequence settles
  }
  match.Release();  // drops the Match locks; the table references / load locks keep what is needed
  s.settled = s.loading.empty();
  auto [it, ok] = seqs_.emplace(id, std::move(s));
  if (it->second.settled) {
    Settle(id, it->second);
  } else {
    unsettled_.insert(id);
  }
  *table = it->second.table;
  return Status::Ok();
}

bool KvCacheManager::Impl::PromotionReady(SeqId id, std::vector<BlockId>* table) {
  ProcessCompletions();
  const Seq& s = seq(id);
  if (!s.settled) return false;
  *table = s.table;
  return true;
}

void KvCacheManager::Impl::SettleAll() {
  if (unsettled_.empty()) return;
  std::vector<SeqId> ids(unsettled_.begin(), unsettled_.end());
  for (SeqId id : ids) Settle(id, seqs_.at(id));
}

// Once no load of s is in flight: cut the chain at the first block that did
// not arrive, give the sequence private blocks from there on, unlock.
bool KvCacheManager::Impl::Settle(SeqId id, Seq& s) {
  PrefixIndex& index = store_.index();
  SlotTier& dev = store_.device();
  for (uint32_t eid : s.loading) {
    const IndexEntry& e = index.at(eid);
    if (e.device.slot >= 0 && !e.device.ready) return false;  // still loading
  }
  size_t cut = 0;
  while (cut < s.matched.size()) {
    const IndexEntry& e = index.at(s.matched[cut]);
    if (!(e.device.slot == s.table[cut] && e.device.ready)) break;
    ++cut;
  }
  for (size_t i = cut; i < s.matched.size(); ++i) {
    const int32_t slot = s.table[i];
    const int32_t owner = dev.owner(slot);
    if (owner < 0) continue;  // already private (its load failed)
    if (dev.refcount(slot) == 1) {
      store_.DropCopy(uint32_t(owner), kDeviceTier);  // hand the slot to the sequence; the entry keeps its other copies
      continue;
    }
    const int32_t fresh = alloc_->AllocDeviceSlot();
    if (fresh < 0) return false;  // retried on the next call
    s.table[i] = fresh;
    store_.Unref(kDeviceTier, slot);
  }
  if (cut < s.matched.size()) {
    const int64_t lost = int64_t(s.matched.size() - cut) * page_;
    s.miss.loading += lost;  // the load did not deliver: recomputed
    if (s.explained) store_.accounting().CountFailedLoads(lost);
    store_.counters().failed_loads++;
    s.matched.resize(cut);
    s.matched_tier.resize(cut);
    s.hashes.resize(cut);
  }
  for (uint32_t eid : s.loading) {
    index.at(eid).locks--;
    store_.RefreshEntry(eid);
    store_.MaybeErase(eid);
  }
  s.loading.clear();
  s.settled = true;
  s.cached_tokens = int64_t(cut) * page_;
  for (Tier t : s.matched_tier) s.reuse[t] += page_;
  store_.counters().reused_tokens += s.cached_tokens;
  unsettled_.erase(id);
  OpenForKernels(s, 0);
  return true;
}

void KvCacheManager::Impl::CommitFullBlock(SeqId id, int block_index, std::span<const int32_t> tokens) {
  ProcessCompletions();
  auto it = seqs_.find(id);
  PG_CHECK_MSG(it != seqs_.end(), "CommitFullBlock: unknown sequence");
  Seq& s = it->second;
  PG_CHECK_MSG(tokens.size() == size_t(page_), "CommitFullBlock: block must hold page_tokens tokens");
  PG_CHECK_MSG(block_index >= 0 && size_t(block_index) < s.table.size(), "CommitFullBlock: block index out of range");
  PG_CHECK_MSG(s.settled, "CommitFullBlock before PromotionReady");
  if (!s.eligible) return;
  if (size_t(block_index) < s.hashes.size()) return;  // matched or committed already
  PG_CHECK_MSG(size_t(block_index) == s.hashes.size(), "CommitFullBlock: blocks must be committed in order");
  const BlockHash parent = block_index == 0 ? s.root : s.hashes.back();
  const BlockHash h = ChainHash(parent, tokens, cfg_.hash_key);
  s.hashes.push_back(h);
  const int32_t slot = s.table[size_t(block_index)];
  PG_CHECK(store_.device().owner(slot) < 0);
  ++tick_;
  PrefixIndex& index = store_.index();
  uint32_t eid = index.Find(h);
  if (eid == PrefixIndex::kNone) {
    eid = store_.Publish(h, parent, block_index, tokens);
  } else {
    IndexEntry& e = index.at(eid);
    if (e.device.slot >= 0 || !std::equal(tokens.begin(), tokens.end(), e.tokens.begin(), e.tokens.end())) {
      Touch(e, s.session);  // another copy serves the index; this block stays private
      store_.RefreshEntry(eid);
      return;
    }
  }
  IndexEntry& e = index.at(eid);
  e.device = SlotCopy{slot, true};
  store_.device().SetOwner(slot, eid);
  store_.counters().device.bytes_in += int64_t(store_.block_bytes());
  Touch(e, s.session);
  store_.RefreshEntry(eid);
  if (cfg_.write_policy == WritePolicy::kWriteThrough) alloc_->WriteThrough(eid);
  if (store_.remote() != nullptr) mover_->Start(eid, kDeviceTier, kRemoteTier);  // write-behind to Redis
  hints_->Enforce(s.session);
}

void KvCacheManager::Impl::FreeSequence(SeqId id) {
  ProcessCompletions();
  auto it = seqs_.find(id);
  PG_CHECK_MSG(it != seqs_.end(), "FreeSequence: unknown sequence");
  Seq& s = it->second;
  if (s.settled) CloseForKernels(s, 0);
  for (uint32_t eid : s.loading) {
    store_.index().at(eid).locks--;
    store_.RefreshEntry(eid);
  }
  for (int32_t slot : s.table) store_.Unref(kDeviceTier, slot);
  for (uint32_t eid : s.loading) store_.MaybeErase(eid);
  unsettled_.erase(id);
  const int32_t session = s.session;
  seqs_.erase(it);
  hints_->Enforce(session);
}

Status KvCacheManager::Impl::Append(SeqId id, int64_t n_new, std::vector<BlockId>* table) {
  ProcessCompletions();
  auto it = seqs_.find(id);
  PG_CHECK_MSG(it != seqs_.end(), "Append: unknown sequence");
  if (n_new < 0) return InvalidArgument("Append: negative token count");
  Seq& s = it->second;
  const int64_t need = BlocksFor(s.n_tokens + n_new) - int64_t(s.table.size());
  if (need > 0 && !CanAllocate(need)) {
    return ResourceExhausted(fmt::format("kv device tier: {} blocks needed to grow, none left", need));
  }
  alloc_->PrepareDeviceRoom(need);
  const size_t old_size = s.table.size();
  for (int64_t i = 0; i < need; ++i) s.table.push_back(AllocDeviceSlot());
  if (s.settled) OpenForKernels(s, old_size);  // else Settle opens the whole table
  s.n_tokens += n_new;
  *table = s.table;
  return Status::Ok();
}

}  // namespace pg
