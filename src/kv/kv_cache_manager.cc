#include "kv/kv_cache_manager.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/check.h"
#include "base/clock.h"
#include "base/log.h"
#include "base/units.h"
#include "kv/kv_cache_manager_impl.h"

namespace pg {

// ---------------------------------------------------------------- config

const char* EvictionPolicyName(EvictionPolicy p) { return p == EvictionPolicy::kLru ? "lru" : "cost"; }
const char* WritePolicyName(WritePolicy p) { return p == WritePolicy::kWriteThrough ? "write-through" : "write-back"; }

Result<EvictionPolicy> ParseEvictionPolicy(const std::string& s) {
  if (s == "lru") return EvictionPolicy::kLru;
  if (s == "cost" || s == "cost-aware") return EvictionPolicy::kCostAware;
  return InvalidArgument(fmt::format("eviction policy '{}': expected lru or cost", s));
}

Result<WritePolicy> ParseWritePolicy(const std::string& s) {
  if (s == "write-through") return WritePolicy::kWriteThrough;
  if (s == "write-back") return WritePolicy::kWriteBack;
  return InvalidArgument(fmt::format("write policy '{}': expected write-through or write-back", s));
}

KvCacheConfig KvCacheConfig::Baseline(const KvLayout& layout, std::string model_identity, uint64_t device_bytes) {
  KvCacheConfig c;
  c.layout = layout;
  c.model_identity = std::move(model_identity);
  c.device_bytes = device_bytes;
  c.eviction = EvictionPolicy::kLru;
  c.write_policy = WritePolicy::kWriteBack;
  return c;
}

KvCacheConfig KvCacheConfig::Optimized(const KvLayout& layout, std::string model_identity, uint64_t device_bytes,
                                       uint64_t host_bytes, std::string disk_dir, uint64_t disk_bytes) {
  KvCacheConfig c = Baseline(layout, std::move(model_identity), device_bytes);
  c.host_bytes = host_bytes;
  c.disk_dir = std::move(disk_dir);
  c.disk_bytes = disk_bytes;
  c.eviction = EvictionPolicy::kCostAware;
  return c;
}

// ---------------------------------------------------------------- PrefixMatch

PrefixMatch::PrefixMatch(PrefixMatch&& o) noexcept { *this = std::move(o); }

PrefixMatch& PrefixMatch::operator=(PrefixMatch&& o) noexcept {
  if (this == &o) return *this;
  Release();
  device_tokens = o.device_tokens;
  host_tokens = o.host_tokens;
  disk_tokens = o.disk_tokens;
  owner_ = o.owner_;
  entries_ = std::move(o.entries_);
  root_ = o.root_;
  session_ = o.session_;
  eligible_ = o.eligible_;
  o.owner_ = nullptr;
  o.entries_.clear();
  o.device_tokens = o.host_tokens = o.disk_tokens = 0;
  return *this;
}

PrefixMatch::~PrefixMatch() { Release(); }

void PrefixMatch::Release() {
  if (owner_ != nullptr) owner_->ReleaseMatch(this);
  owner_ = nullptr;
}

// ---------------------------------------------------------------- Impl: setup

KvCacheManager::Impl::Impl(KvCacheConfig config) : cfg_(std::move(config)), layout_(cfg_.layout), page_(layout_.page_tokens) {
  if (!cfg_.clock) cfg_.clock = [] { return NowSeconds(); };
}

Status KvCacheManager::Impl::Init() {
  PG_RETURN_IF_ERROR(layout_.Validate());
  const uint64_t bb = layout_.block_bytes();
  const uint64_t n_dev = cfg_.device_bytes / bb;
  if (n_dev < 1) {
    return InvalidArgument(fmt::format("--kv-device-mem {} holds no block of {} ({})", FormatBytes(cfg_.device_bytes),
                                       FormatBytes(bb), layout_.ToString()));
  }
  if (n_dev >= (uint64_t(1) << 31)) return InvalidArgument("--kv-device-mem: too many blocks");
  const uint64_t n_host = cfg_.host_bytes / bb;
  if (cfg_.host_bytes > 0 && n_host < 1) {
    return InvalidArgument(fmt::format("--kv-host-mem {} holds no block of {}", FormatBytes(cfg_.host_bytes), FormatBytes(bb)));
  }
  if (n_host >= (uint64_t(1) << 31)) return InvalidArgument("--kv-host-mem: too many blocks");
  if (cfg_.io_threads < 1 || cfg_.io_threads > 64) return InvalidArgument("kv io threads must be in [1, 64]");
  if (cfg_.min_promote_tokens < 0) return InvalidArgument("kv min promote tokens must be >= 0");
  PG_ASSIGN_OR_RETURN(device_arena_, HostBlockArena::Create(int64_t(n_dev), bb));
  PG_ASSIGN_OR_RETURN(host_arena_, HostBlockArena::Create(int64_t(n_host), bb));
  device_pool_ = BlockPool(int64_t(n_dev));
  host_pool_ = BlockPool(int64_t(n_host));
  device_owner_.assign(n_dev, -1);
  host_owner_.assign(n_host, -1);
  mover_ = std::make_unique<BlockMover>(cfg_.io_threads);
  c_.device.capacity_blocks = int64_t(n_dev);
  c_.host.capacity_blocks = int64_t(n_host);

  if (!cfg_.disk_dir.empty() && cfg_.disk_bytes == 0) return InvalidArgument("--kv-disk-dir needs --kv-disk-size > 0");
  if (!cfg_.disk_dir.empty() && cfg_.prefix_cache) {
    PG_ASSIGN_OR_RETURN(disk_, DiskTier::Open(cfg_.disk_dir, layout_, cfg_.model_identity));
    disk_capacity_blocks_ = int64_t(cfg_.disk_bytes / disk_->file_bytes());
    if (disk_capacity_blocks_ < 1) {
      return InvalidArgument(fmt::format("--kv-disk-size {} holds no block file of {}", FormatBytes(cfg_.disk_bytes),
                                         FormatBytes(disk_->file_bytes())));
    }
    c_.disk.capacity_blocks = disk_capacity_blocks_;
    PG_ASSIGN_OR_RETURN(auto scan, disk_->Scan());
    c_.disk.errors += scan.removed_bad;
    for (auto& b : scan.blocks) {
      if (index_.Find(b.hash) != PrefixIndex::kNone) continue;
      const uint32_t id = index_.Insert(b.hash, b.parent, b.depth, b.tokens);
      IndexEntry& e = index_.at(id);
      e.on_disk = true;
      e.last_tick = 0;
      ++disk_used_blocks_;
      RefreshEntry(id);
    }
    while (disk_used_blocks_ > disk_capacity_blocks_ && EvictOne(kDiskTier, false)) {
    }
    if (!scan.blocks.empty() || scan.removed_bad > 0) {
      PG_LOG_INFO("kv disk tier {}: {} blocks indexed, {} damaged files removed, {} foreign files", cfg_.disk_dir,
                  disk_used_blocks_, scan.removed_bad, scan.foreign);
    }
  }
  return Status::Ok();
}

// ---------------------------------------------------------------- Impl: sessions

int32_t KvCacheManager::Impl::SessionIndex(const std::string& session) {
  if (session.empty()) return -1;
  auto [it, inserted] = session_ids_.emplace(session, int32_t(session_deadline_.size()));
  if (inserted) session_deadline_.push_back(0);
  return it->second;
}

bool KvCacheManager::Impl::Retained(const IndexEntry& e) const {
  return e.session >= 0 && session_deadline_[size_t(e.session)] > cfg_.clock();
}

void KvCacheManager::Impl::Touch(IndexEntry& e, int32_t session) {
  e.last_tick = tick_;
  e.last_use_s = cfg_.clock();
  e.uses++;
  if (session >= 0) e.session = session;
}

// ---------------------------------------------------------------- Impl: lookups

PrefixMatch KvCacheManager::Impl::Match(std::span<const int32_t> tokens, const CacheRequest& request,
                                        KvCacheManager* owner) {
  ProcessCompletions(false);
  PrefixMatch m;
  m.session_ = SessionIndex(request.session);
  if (!cfg_.prefix_cache || !request.use_prefix_cache) return m;
  m.eligible_ = true;
  m.root_ = RootHash(cfg_.model_identity, request.salt);
  const int64_t max_blocks = tokens.empty() ? 0 : int64_t(tokens.size() - 1) / page_;
  std::vector<uint32_t> chain;
  index_.MatchChain(m.root_, tokens, page_, max_blocks, &chain);

  // Keep the chain while every block has a usable copy; note the tier.
  std::vector<uint8_t> tiers;
  int64_t first_slow = -1;
  for (uint32_t id : chain) {
    const IndexEntry& e = index_.at(id);
    int tier;
    if (e.device >= 0 && e.device_ready) tier = kDeviceTier;
    else if (e.device >= 0) break;  // a load into the device is in flight for another sequence
    else if (e.host >= 0 && e.host_ready) tier = kHostTier;
    else if (e.on_disk) tier = kDiskTier;
    else break;
    if (tier != kDeviceTier && first_slow < 0) first_slow = int64_t(tiers.size());
    tiers.push_back(uint8_t(tier));
  }
  int64_t n_slow = 0;
  for (uint8_t t : tiers) n_slow += t != kDeviceTier;
  if (n_slow > 0 && n_slow * page_ < cfg_.min_promote_tokens) {
    tiers.resize(size_t(first_slow));  // not worth moving: recompute from the first slow block
    c_.skipped_short_hits++;
  }
  ++tick_;
  for (size_t i = 0; i < tiers.size(); ++i) {
    const uint32_t id = chain[i];
    IndexEntry& e = index_.at(id);
    e.locks++;
    match_locks_++;
    Touch(e, m.session_);
    RefreshEntry(id);
    m.entries_.push_back(id);
    (tiers[i] == kDeviceTier ? m.device_tokens : tiers[i] == kHostTier ? m.host_tokens : m.disk_tokens) += page_;
  }
  m.owner_ = owner;
  // Counters.
  c_.lookups++;
  c_.lookup_tokens += int64_t(tokens.size());
  const int64_t nd = m.device_tokens / page_, nh = m.host_tokens / page_, nk = m.disk_tokens / page_;
  c_.device.hit_blocks += nd;
  c_.device.hit_tokens += m.device_tokens;
  c_.host.hit_blocks += nh;
  c_.host.hit_tokens += m.host_tokens;
  c_.disk.hit_blocks += nk;
  c_.disk.hit_tokens += m.disk_tokens;
  c_.device.miss_blocks += max_blocks - nd;
  c_.host.miss_blocks += max_blocks - nd - nh;
  c_.disk.miss_blocks += max_blocks - nd - nh - nk;
  return m;
}

void KvCacheManager::Impl::ReleaseMatch(PrefixMatch* m) {
  for (uint32_t id : m->entries_) {
    IndexEntry& e = index_.at(id);
    PG_CHECK(e.locks > 0);
    e.locks--;
    match_locks_--;
    RefreshEntry(id);
    MaybeErase(id);
  }
  m->entries_.clear();
}

// ---------------------------------------------------------------- Impl: sequences

Status KvCacheManager::Impl::AllocateSequence(SeqId id, PrefixMatch&& match, int64_t total_tokens,
                                              std::vector<BlockId>* table) {
  ProcessCompletions(false);
  PG_CHECK_MSG(seqs_.find(id) == seqs_.end(), "AllocateSequence: sequence id already allocated");
  if (total_tokens < match.tokens() || total_tokens < 0) {
    return InvalidArgument(fmt::format("AllocateSequence: {} tokens < matched {}", total_tokens, match.tokens()));
  }
  const int64_t n_blocks = BlocksFor(total_tokens);
  const int64_t need = n_blocks - match.device_tokens / page_;
  if (!CanAllocate(need)) {
    match.Release();
    return ResourceExhausted(fmt::format("kv device tier: {} blocks needed, {} free or evictable", need,
                                         device_pool_.n_free() + EvictableDevice()));
  }
  PrepareDeviceRoom(need);
  Seq s;
  s.n_tokens = total_tokens;
  s.root = match.root_;
  s.eligible = match.eligible_;
  s.session = match.session_;
  s.table.reserve(size_t(n_blocks));
  for (uint32_t eid : match.entries_) {
    IndexEntry& e = index_.at(eid);
    s.hashes.push_back(e.hash);
    s.matched.push_back(eid);
    if (e.device >= 0 && e.device_ready) {
      device_pool_.Ref(e.device);
      s.table.push_back(e.device);
      s.matched_tier.push_back(kDeviceTier);
      continue;
    }
    const int tier = (e.host >= 0 && e.host_ready) ? kHostTier : kDiskTier;
    const int32_t slot = AllocDeviceSlot();
    PG_CHECK_MSG(slot >= 0, "device slot vanished between CanAllocate and allocation");
    s.table.push_back(slot);  // the sequence's reference (refcount 1 from Allocate)
    s.matched_tier.push_back(uint8_t(tier));
    StartLoad(eid, slot);
    s.loading.push_back(eid);
    e.locks++;  // held until the sequence settles
  }
  while (int64_t(s.table.size()) < n_blocks) {
    const int32_t slot = AllocDeviceSlot();
    PG_CHECK_MSG(slot >= 0, "device slot vanished between CanAllocate and allocation");
    s.table.push_back(slot);
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
  ProcessCompletions(false);
  auto it = seqs_.find(id);
  PG_CHECK_MSG(it != seqs_.end(), "PromotionReady: unknown sequence");
  if (!it->second.settled) return false;
  *table = it->second.table;
  return true;
}

// Once no load of s is in flight: cut the chain at the first block that did
// not arrive, give the sequence private blocks from there on, unlock.
bool KvCacheManager::Impl::Settle(SeqId id, Seq& s) {
  for (uint32_t eid : s.loading) {
    const IndexEntry& e = index_.at(eid);
    if (e.device >= 0 && !e.device_ready) return false;  // still loading
  }
  size_t cut = 0;
  while (cut < s.matched.size()) {
    const IndexEntry& e = index_.at(s.matched[cut]);
    if (!(e.device == s.table[cut] && e.device_ready)) break;
    ++cut;
  }
  for (size_t i = cut; i < s.matched.size(); ++i) {
    const int32_t slot = s.table[i];
    const int32_t owner = device_owner_[size_t(slot)];
    if (owner < 0) continue;  // already private (its load failed)
    if (device_pool_.refcount(slot) == 1) {
      DropCopy(uint32_t(owner), kDeviceTier);  // hand the slot to the sequence; the entry keeps its other copies
      device_owner_[size_t(slot)] = -1;
      continue;
    }
    const int32_t fresh = AllocDeviceSlot();
    if (fresh < 0) return false;  // retried on the next call
    s.table[i] = fresh;
    UnrefDevice(slot);
  }
  if (cut < s.matched.size()) {
    c_.failed_loads++;
    s.matched.resize(cut);
    s.matched_tier.resize(cut);
    s.hashes.resize(cut);
  }
  for (uint32_t eid : s.loading) {
    index_.at(eid).locks--;
    RefreshEntry(eid);
    MaybeErase(eid);
  }
  s.loading.clear();
  s.settled = true;
  s.cached_tokens = int64_t(cut) * page_;
  for (uint8_t t : s.matched_tier) {
    (t == kDeviceTier ? s.reuse.device_tokens : t == kHostTier ? s.reuse.host_tokens : s.reuse.disk_tokens) += page_;
  }
  c_.reused_tokens += s.cached_tokens;
  unsettled_.erase(id);
  return true;
}

void KvCacheManager::Impl::CommitFullBlock(SeqId id, int block_index, std::span<const int32_t> tokens) {
  ProcessCompletions(false);
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
  const BlockHash h = ChainHash(parent, tokens);
  s.hashes.push_back(h);
  const int32_t slot = s.table[size_t(block_index)];
  PG_CHECK(device_owner_[size_t(slot)] < 0);
  ++tick_;
  uint32_t eid = index_.Find(h);
  if (eid == PrefixIndex::kNone) {
    eid = index_.Insert(h, parent, block_index, tokens);
  } else {
    IndexEntry& e = index_.at(eid);
    if (e.device >= 0 || !std::equal(tokens.begin(), tokens.end(), e.tokens.begin(), e.tokens.end())) {
      Touch(e, s.session);  // another copy serves the index; this block stays private
      RefreshEntry(eid);
      return;
    }
  }
  IndexEntry& e = index_.at(eid);
  e.device = slot;
  e.device_ready = true;
  device_owner_[size_t(slot)] = int32_t(eid);
  c_.device.bytes_in += int64_t(layout_.block_bytes());
  Touch(e, s.session);
  RefreshEntry(eid);
  if (cfg_.write_policy == WritePolicy::kWriteThrough) {
    if (host_enabled() && e.host < 0) {
      const int32_t hs = AllocHostSlot(false);
      if (hs >= 0) StartWriteToHost(eid, hs);
    } else if (!host_enabled() && disk_writable() && !e.on_disk && !e.disk_writing) {
      StartWriteToDisk(eid, false);
    }
  }
}

void KvCacheManager::Impl::FreeSequence(SeqId id) {
  ProcessCompletions(false);
  auto it = seqs_.find(id);
  PG_CHECK_MSG(it != seqs_.end(), "FreeSequence: unknown sequence");
  Seq& s = it->second;
  for (uint32_t eid : s.loading) {
    index_.at(eid).locks--;
    RefreshEntry(eid);
  }
  for (int32_t slot : s.table) UnrefDevice(slot);
  for (uint32_t eid : s.loading) MaybeErase(eid);
  unsettled_.erase(id);
  seqs_.erase(it);
}

Status KvCacheManager::Impl::Append(SeqId id, int64_t n_new, std::vector<BlockId>* table) {
  ProcessCompletions(false);
  auto it = seqs_.find(id);
  PG_CHECK_MSG(it != seqs_.end(), "Append: unknown sequence");
  if (n_new < 0) return InvalidArgument("Append: negative token count");
  Seq& s = it->second;
  const int64_t need = BlocksFor(s.n_tokens + n_new) - int64_t(s.table.size());
  if (need > 0 && !CanAllocate(need)) {
    return ResourceExhausted(fmt::format("kv device tier: {} blocks needed to grow, none left", need));
  }
  PrepareDeviceRoom(need);
  for (int64_t i = 0; i < need; ++i) {
    const int32_t slot = AllocDeviceSlot();
    PG_CHECK(slot >= 0);
    s.table.push_back(slot);
  }
  s.n_tokens += n_new;
  *table = s.table;
  return Status::Ok();
}

// ---------------------------------------------------------------- facade

Result<std::unique_ptr<KvCacheManager>> KvCacheManager::Create(KvCacheConfig config) {
  auto impl = std::make_unique<Impl>(std::move(config));
  PG_RETURN_IF_ERROR(impl->Init());
  return std::unique_ptr<KvCacheManager>(new KvCacheManager(std::move(impl)));
}

KvCacheManager::KvCacheManager(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

KvCacheManager::~KvCacheManager() { impl_->WaitAll(); }

const KvLayout& KvCacheManager::layout() const { return impl_->layout_; }
int64_t KvCacheManager::device_blocks() const { return impl_->device_pool_.capacity(); }

PrefixMatch KvCacheManager::Match(std::span<const int32_t> tokens, const CacheRequest& request) {
  return impl_->Match(tokens, request, this);
}
void KvCacheManager::ReleaseMatch(PrefixMatch* m) { impl_->ReleaseMatch(m); }

int64_t KvCacheManager::BlocksNeeded(const PrefixMatch& match, int64_t total_tokens) const {
  return std::max<int64_t>(0, impl_->BlocksFor(total_tokens) - match.device_tokens / page_tokens());
}
bool KvCacheManager::CanAllocate(int64_t n_blocks) const { return impl_->CanAllocate(n_blocks); }

Status KvCacheManager::AllocateSequence(SeqId seq, PrefixMatch&& match, int64_t total_tokens,
                                        std::vector<BlockId>* block_table) {
  PG_CHECK_MSG(match.owner_ == nullptr || match.owner_ == this, "PrefixMatch from another manager");
  return impl_->AllocateSequence(seq, std::move(match), total_tokens, block_table);
}
bool KvCacheManager::PromotionReady(SeqId seq, std::vector<BlockId>* block_table) {
  return impl_->PromotionReady(seq, block_table);
}

static const KvCacheManager::Impl::Seq& GetSeq(const KvCacheManager::Impl& impl, SeqId seq) {
  auto it = impl.seqs_.find(seq);
  PG_CHECK_MSG(it != impl.seqs_.end(), "unknown sequence");
  return it->second;
}

int64_t KvCacheManager::CachedTokens(SeqId seq) const {
  const auto& s = GetSeq(*impl_, seq);
  return s.settled ? s.cached_tokens : 0;
}
SequenceReuse KvCacheManager::Reuse(SeqId seq) const { return GetSeq(*impl_, seq).reuse; }
std::span<const BlockId> KvCacheManager::BlockTable(SeqId seq) const { return GetSeq(*impl_, seq).table; }
int64_t KvCacheManager::SequenceTokens(SeqId seq) const { return GetSeq(*impl_, seq).n_tokens; }

bool KvCacheManager::CanAppend(SeqId seq, int64_t n_new_tokens) const {
  const auto& s = GetSeq(*impl_, seq);
  return impl_->CanAllocate(impl_->BlocksFor(s.n_tokens + n_new_tokens) - int64_t(s.table.size()));
}
Status KvCacheManager::Append(SeqId seq, int64_t n_new_tokens, std::vector<BlockId>* block_table) {
  return impl_->Append(seq, n_new_tokens, block_table);
}
void KvCacheManager::CommitFullBlock(SeqId seq, int block_index, std::span<const int32_t> block_tokens) {
  impl_->CommitFullBlock(seq, block_index, block_tokens);
}
void KvCacheManager::FreeSequence(SeqId seq) { impl_->FreeSequence(seq); }

void KvCacheManager::Hint(const std::string& session, double ttl_s) {
  const int32_t idx = impl_->SessionIndex(session);
  if (idx < 0) return;
  impl_->session_deadline_[size_t(idx)] = impl_->cfg_.clock() + (ttl_s < 0 ? impl_->cfg_.default_session_ttl_s : ttl_s);
}
void KvCacheManager::ReleaseSession(const std::string& session) {
  auto it = impl_->session_ids_.find(session);
  if (it != impl_->session_ids_.end()) impl_->session_deadline_[size_t(it->second)] = 0;
}

void KvCacheManager::Tick() {
  impl_->ProcessCompletions(false);
  impl_->CleanInBackground();
}
Status KvCacheManager::Flush() { return impl_->Flush(); }
void KvCacheManager::WaitIdle() {
  impl_->WaitAll();
  impl_->ProcessCompletions(false);  // settles sequences whose loads landed
}

uint8_t* KvCacheManager::DeviceBlockPtr(BlockId id) { return impl_->device_arena_->BlockPtr(id); }
CacheCounters KvCacheManager::counters() const { return impl_->Counters(); }
Status KvCacheManager::CheckIntegrity() const { return impl_->CheckIntegrity(); }

}  // namespace pg
