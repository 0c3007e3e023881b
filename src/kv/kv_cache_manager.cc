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
  static_cast<TierTokens&>(*this) = o;
  owner_ = o.owner_;
  entries_ = std::move(o.entries_);
  root_ = o.root_;
  session_ = o.session_;
  eligible_ = o.eligible_;
  stop_ = o.stop_;
  explain_ = o.explain_;
  o.owner_ = nullptr;
  o.entries_.clear();
  for (int t = 0; t < kLocalTiers; ++t) o[t] = 0;
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
  return std::max<int64_t>(0, impl_->seqs().BlocksFor(total_tokens) - match[kDeviceTier] / page_tokens());
}
bool KvCacheManager::CanAllocate(int64_t n_blocks) const { return impl_->seqs().CanAllocate(n_blocks); }

Status KvCacheManager::AllocateSequence(SeqId seq, PrefixMatch&& match, int64_t total_tokens,
                                        std::vector<BlockId>* block_table) {
  PG_CHECK_MSG(match.owner_ == nullptr || match.owner_ == this, "PrefixMatch from another manager");
  return impl_->seqs().AllocateSequence(seq, std::move(match), total_tokens, block_table);
}
bool KvCacheManager::PromotionReady(SeqId seq, std::vector<BlockId>* block_table) {
  return impl_->seqs().PromotionReady(seq, block_table);
}

int64_t KvCacheManager::CachedTokens(SeqId seq) const { return impl_->seqs().CachedTokens(seq); }
TierTokens KvCacheManager::Reuse(SeqId seq) const { return impl_->seqs().seq(seq).reuse; }
int64_t KvCacheManager::SequenceTokens(SeqId seq) const { return impl_->seqs().seq(seq).n_tokens; }

bool KvCacheManager::CanAppend(SeqId seq, int64_t n_new_tokens) const {
  return impl_->seqs().CanAppend(seq, n_new_tokens);
}
Status KvCacheManager::Append(SeqId seq, int64_t n_new_tokens, std::vector<BlockId>* block_table) {
  return impl_->seqs().Append(seq, n_new_tokens, block_table);
}
Status KvCacheManager::TruncateSequence(SeqId seq, int64_t n_tokens, std::vector<BlockId>* block_table) {
  return impl_->seqs().TruncateSequence(seq, n_tokens, block_table);
}
void KvCacheManager::CommitFullBlock(SeqId seq, int block_index, std::span<const int32_t> block_tokens) {
  impl_->seqs().CommitFullBlock(seq, block_index, block_tokens);
}
void KvCacheManager::FreeSequence(SeqId seq) { impl_->seqs().FreeSequence(seq); }

void KvCacheManager::HoldSession(const std::string& session, double ttl_s) { impl_->retention().Hint(session, ttl_s); }
void KvCacheManager::ReleaseSession(const std::string& session) { impl_->retention().Release(session); }

PrefixHintResult KvCacheManager::ApplyPrefixHint(std::span<const int32_t> prefix, const CacheRequest& request,
                                                 PrefixAction action, double ttl_s) {
  return impl_->ApplyPrefixHint(prefix, request, action, ttl_s);
}
HintCounters KvCacheManager::hint_counters() const { return impl_->hints().counters(); }

void KvCacheManager::Tick() { impl_->Tick(); }
Status KvCacheManager::Flush() { return impl_->Flush(); }
void KvCacheManager::WaitIdle() {
  impl_->WaitAll();
  impl_->seqs().ProcessCompletions();  // settles sequences whose loads landed
}

uint8_t* KvCacheManager::DeviceBlockPtr(BlockId id) { return impl_->DeviceBlockPtr(id); }
CacheCounters KvCacheManager::counters() const { return impl_->Counters(); }
void KvCacheManager::StartRemoteLookup(SeqId seq, std::span<const int32_t> tokens, const CacheRequest& request) {
  impl_->remote().Start(seq, tokens, request);
}
bool KvCacheManager::RemoteLookupPending(SeqId seq) { return impl_->remote().Pending(seq); }
int64_t KvCacheManager::remote_lookups_pending() const { return impl_->remote().pending(); }
void KvCacheManager::ExplainMisses(PrefixMatch* match, std::span<const int32_t> tokens) {
  impl_->ExplainMisses(match, tokens);
}
MissCounts KvCacheManager::Misses(SeqId seq) const { return impl_->seqs().seq(seq).miss; }
Status KvCacheManager::CheckIntegrity() const { return impl_->CheckIntegrity(); }

}  // namespace pg
