// KvCacheManager::Impl and the remote tier: the lookups a waiting sequence
// asks for, and the import of the blocks found into the device tier, by the
// mover's (remote, device) road, the one loads from disk take. Scheduler
// thread; the Redis traffic itself runs on RemoteTier's threads.
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
  if (store_.remote() == nullptr || !request.use_prefix_cache || remote_waits_.count(id)) return;
  const int64_t max_blocks = tokens.empty() ? 0 : int64_t(tokens.size() - 1) / page_;
  const BlockHash root = RootHash(cfg_.model_identity, request.salt, cfg_.hash_key);
  std::vector<uint32_t> chain;
  store_.index().MatchChain(root, tokens, page_, max_blocks, cfg_.hash_key, &chain);
  const int64_t local = int64_t(chain.size());
  if (local >= max_blocks) return;  // the local tiers hold every full block
  std::vector<RemoteWant> want;
  BlockHash parent = chain.empty() ? root : store_.index().at(chain.back()).hash;
  for (int64_t b = local; b < std::min(max_blocks, local + kMaxLookupBlocks); ++b) {
    RemoteWant w;
    w.parent = parent;
    w.depth = int32_t(b);
    w.tokens.assign(tokens.begin() + b * page_, tokens.begin() + (b + 1) * page_);
    w.hash = ChainHash(parent, w.tokens, cfg_.hash_key);
    parent = w.hash;
    want.push_back(std::move(w));
  }
  const double deadline = NowSeconds() + cfg_.remote.timeout_s;
  store_.remote()->Lookup(uint64_t(id), std::move(want), deadline);
  remote_waits_[id] = RemoteWait{deadline + kWaitGraceS, false};
}

bool KvCacheManager::Impl::RemoteLookupPending(SeqId id) {
  if (store_.remote() == nullptr) return false;
  ImportRemoteBlocks();
  auto it = remote_waits_.find(id);
  if (it == remote_waits_.end()) return false;
  if (!it->second.done && NowSeconds() < it->second.deadline_s) return true;
  if (!it->second.done) remote_abandoned_++;  // late: admitted without it (its blocks still land)
  remote_waits_.erase(it);
  return false;
}

void KvCacheManager::Impl::ImportRemoteBlocks() {
  if (store_.remote() == nullptr) return;
  const double now = NowSeconds();
  RemoteTier& remote = *store_.remote();
  std::vector<uint64_t> moves;
  for (RemoteFound& f : remote.TakeFound()) {
    if (auto it = remote_waits_.find(SeqId(f.ticket)); it != remote_waits_.end()) it->second.done = true;
    PrefixIndex& index = store_.index();
    ++tick_;
    for (RemoteBlock& b : f.blocks) {
      if (index.Find(b.info.hash) != PrefixIndex::kNone) continue;  // a local tier has it (or gets it)
      if (!alloc_->CanAllocateDevice(1)) break;
      alloc_->PrepareDeviceRoom(1);
      const int32_t slot = alloc_->AllocDeviceSlot();
      if (slot < 0) break;
      const uint32_t eid = store_.Publish(b.info.hash, b.info.parent, b.info.depth, b.info.tokens);
      remote.Stage(b.info.hash, std::move(b.data));
      moves.push_back(mover_->Start(eid, kRemoteTier, kDeviceTier, slot));
      store_.Unref(kDeviceTier, slot);  // the move's pin keeps it; the block is cached once it lands
      Touch(index.at(eid), -1);
      store_.RefreshEntry(eid);
      remote_imported_++;
    }
  }
  // Landed before the waiting sequences are admitted, so that Match finds them ready.
  for (uint64_t tag : moves) alloc_->WaitFor(tag);
  for (auto it = remote_waits_.begin(); it != remote_waits_.end();) {
    if (now > it->second.deadline_s + kForgetAfterS)
      it = remote_waits_.erase(it);
    else
      ++it;
  }
}

RemoteCounters KvCacheManager::Impl::RemoteSnapshot() const {
  if (store_.remote() == nullptr) return RemoteCounters{};
  RemoteCounters c = store_.remote()->counters();
  c.imported_blocks = remote_imported_;
  c.abandoned = remote_abandoned_;
  return c;
}

}  // namespace pg
