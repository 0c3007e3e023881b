// KvCacheManager::Impl and the remote tier: the lookups a waiting sequence
// asks for, and the import of the blocks found into the device tier.
// Scheduler thread; the Redis traffic itself runs on RemoteTier's threads.
#include <algorithm>

#include "base/clock.h"
#include "kv/kv_cache_manager_impl.h"

namespace pg {

namespace {
constexpr int64_t kMaxLookupBlocks = 1024;  // blocks asked for per prompt at most
constexpr double kWaitGraceS = 0.01;        // the reader posts its result right at the deadline
constexpr double kForgetAfterS = 10;        // waits of sequences never admitted (cancelled) are dropped
}  // namespace

void KvCacheManager::Impl::StartRemoteLookup(SeqId id, std::span<const int32_t> tokens, const CacheRequest& request) {
  if (!remote_ || !request.use_prefix_cache || remote_waits_.count(id)) return;
  const int64_t max_blocks = tokens.empty() ? 0 : int64_t(tokens.size() - 1) / page_;
  const BlockHash root = RootHash(cfg_.model_identity, request.salt);
  std::vector<uint32_t> chain;
  store_.index().MatchChain(root, tokens, page_, max_blocks, &chain);
  const int64_t local = int64_t(chain.size());
  if (local >= max_blocks) return;  // the local tiers hold every full block
  std::vector<RemoteWant> want;
  BlockHash parent = chain.empty() ? root : store_.index().at(chain.back()).hash;
  for (int64_t b = local; b < std::min(max_blocks, local + kMaxLookupBlocks); ++b) {
    RemoteWant w;
    w.parent = parent;
    w.depth = int32_t(b);
    w.tokens.assign(tokens.begin() + b * page_, tokens.begin() + (b + 1) * page_);
    w.hash = ChainHash(parent, w.tokens);
    parent = w.hash;
    want.push_back(std::move(w));
  }
  const double deadline = NowSeconds() + cfg_.remote.timeout_s;
  remote_->Lookup(uint64_t(id), std::move(want), deadline);
  remote_waits_[id] = RemoteWait{deadline + kWaitGraceS, false};
}

bool KvCacheManager::Impl::RemoteLookupPending(SeqId id) {
  if (!remote_) return false;
  ImportRemoteBlocks();
  auto it = remote_waits_.find(id);
  if (it == remote_waits_.end()) return false;
  if (!it->second.done && NowSeconds() < it->second.deadline_s) return true;
  if (!it->second.done) remote_abandoned_++;  // late: admitted without it (its blocks still land)
  remote_waits_.erase(it);
  return false;
}

void KvCacheManager::Impl::ImportRemoteBlocks() {
  if (!remote_) return;
  const double now = NowSeconds();
  for (RemoteFound& f : remote_->TakeFound()) {
    if (auto it = remote_waits_.find(SeqId(f.ticket)); it != remote_waits_.end()) it->second.done = true;
    PrefixIndex& index = store_.index();
    ++tick_;
    for (const RemoteBlock& b : f.blocks) {
      if (index.Find(b.info.hash) != PrefixIndex::kNone) continue;  // a local tier has it (or gets it)
      if (!alloc_->CanAllocateDevice(1)) break;
      alloc_->PrepareDeviceRoom(1);
      const int32_t slot = alloc_->AllocDeviceSlot();  // refcount 1, dropped below: the block is cached
      if (slot < 0) break;
      store_.device().arena().CopyIn(slot, b.data.data());
      const uint32_t eid = index.Insert(b.info.hash, b.info.parent, b.info.depth, b.info.tokens);
      store_.accounting().NotePublished(b.info.hash, b.info.parent);
      IndexEntry& e = index.at(eid);
      e.device = SlotCopy{slot, true};
      e.from_remote = true;
      store_.device().SetOwner(slot, eid);
      store_.counters().device.bytes_in += int64_t(store_.block_bytes());
      Touch(e, -1);
      store_.RefreshEntry(eid);
      store_.Unref(kDeviceTier, slot);
      remote_imported_++;
    }
  }
  for (auto it = remote_waits_.begin(); it != remote_waits_.end();) {
    if (now > it->second.deadline_s + kForgetAfterS) it = remote_waits_.erase(it);
    else ++it;
  }
}

RemoteCounters KvCacheManager::Impl::RemoteSnapshot() const {
  if (!remote_) return RemoteCounters{};
  RemoteCounters c = remote_->counters();
  c.imported_blocks = remote_imported_;
  c.abandoned = remote_abandoned_;
  return c;
}

}  // namespace pg
