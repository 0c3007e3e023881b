#include "kv/kv_cache_manager.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/check.h"
#include "base/log.h"
#include "kv/kv_cache_manager_impl.h"

namespace pg {

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
  stop_ = o.stop_;
  explain_ = o.explain_;
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

// ---------------------------------------------------------------- facade

Result<std::unique_ptr<KvCacheManager>> KvCacheManager::Create(KvCacheConfig config) {
  auto impl = std::make_unique<Impl>(std::move(config));
  PG_RETURN_IF_ERROR(impl->Init());
  return std::unique_ptr<KvCacheManager>(new KvCacheManager(std::move(impl)));
}

KvCacheManager::KvCacheManager(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}

KvCacheManager::~KvCacheManager() { impl_->WaitAll(); }

void KvCacheManager::SetBlockObserver(KvBlockObserver* observer) { impl_->SetBlockObserver(observer); }

const KvLayout& KvCacheManager::layout() const { return impl_->config().layout; }
int64_t KvCacheManager::device_blocks() const { return impl_->device_blocks(); }

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

int64_t KvCacheManager::CachedTokens(SeqId seq) const { return impl_->CachedTokens(seq); }
TierTokens KvCacheManager::Reuse(SeqId seq) const { return impl_->seq(seq).reuse; }
int64_t KvCacheManager::SequenceTokens(SeqId seq) const { return impl_->seq(seq).n_tokens; }

bool KvCacheManager::CanAppend(SeqId seq, int64_t n_new_tokens) const { return impl_->CanAppend(seq, n_new_tokens); }
Status KvCacheManager::Append(SeqId seq, int64_t n_new_tokens, std::vector<BlockId>* block_table) {
  return impl_->Append(seq, n_new_tokens, block_table);
}
void KvCacheManager::CommitFullBlock(SeqId seq, int block_index, std::span<const int32_t> block_tokens) {
  impl_->CommitFullBlock(seq, block_index, block_tokens);
}
void KvCacheManager::FreeSequence(SeqId seq) { impl_->FreeSequence(seq); }

void KvCacheManager::Hint(const std::string& session, double ttl_s) { impl_->Hint(session, ttl_s); }
void KvCacheManager::ReleaseSession(const std::string& session) { impl_->ReleaseSession(session); }

PrefixHintResult KvCacheManager::ApplyPrefixHint(std::span<const int32_t> prefix, const CacheRequest& request,
                                                 PrefixAction action, double ttl_s) {
  return impl_->ApplyPrefixHint(prefix, request, action, ttl_s);
}
HintCounters KvCacheManager::hint_counters() const { return impl_->hint_counters(); }
bool KvCacheManager::DroppedByPolicy(const BlockHash& h) const { return impl_->DroppedByPolicy(h); }

void KvCacheManager::Tick() { impl_->Tick(); }
Status KvCacheManager::Flush() { return impl_->Flush(); }
void KvCacheManager::WaitIdle() {
  impl_->WaitAll();
  impl_->ProcessCompletions();  // settles sequences whose loads landed
}

uint8_t* KvCacheManager::DeviceBlockPtr(BlockId id) { return impl_->DeviceBlockPtr(id); }
CacheCounters KvCacheManager::counters() const { return impl_->Counters(); }
void KvCacheManager::StartRemoteLookup(SeqId seq, std::span<const int32_t> tokens, const CacheRequest& request) {
  impl_->StartRemoteLookup(seq, tokens, request);
}
bool KvCacheManager::RemoteLookupPending(SeqId seq) { return impl_->RemoteLookupPending(seq); }
int64_t KvCacheManager::remote_lookups_pending() const { return impl_->remote_lookups_pending(); }
bool KvCacheManager::DrainRemoteWrites(double timeout_s) { return impl_->DrainRemoteWrites(timeout_s); }
void KvCacheManager::ExplainMisses(PrefixMatch* match, std::span<const int32_t> tokens) {
  impl_->ExplainMisses(match, tokens);
}
MissCounts KvCacheManager::Misses(SeqId seq) const { return impl_->seq(seq).miss; }
void KvCacheManager::LimitMatch(PrefixMatch* match, int64_t max_tokens) { impl_->LimitMatch(match, max_tokens); }
Status KvCacheManager::CheckIntegrity() const { return impl_->CheckIntegrity(); }

}  // namespace pg
