#include "kv/remote_lookups.h"

#include <algorithm>
#include <vector>

#include "base/clock.h"

namespace pg {

namespace {
constexpr int64_t kMaxLookupBlocks = 1024;  // blocks asked for per prompt at most
constexpr double kWaitGraceS = 0.01;        // the reader posts its result right at the deadline
constexpr double kForgetAfterS = 10;        // waits of sequences never admitted (cancelled) are dropped
}  // namespace

void RemoteLookups::Start(SeqId id, std::span<const int32_t> tokens, const CacheRequest& request) {
  if (store_.remote() == nullptr || !request.use_prefix_cache || waits_.count(id)) return;
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
  waits_[id] = Wait{deadline + kWaitGraceS, false};
}

bool RemoteLookups::Pending(SeqId id) {
  if (store_.remote() == nullptr) return false;
  Import();
  auto it = waits_.find(id);
  if (it == waits_.end()) return false;
  if (!it->second.done && NowSeconds() < it->second.deadline_s) return true;
  if (!it->second.done) abandoned_++;  // late: admitted without it (its blocks still land)
  waits_.erase(it);
  return false;
}

void RemoteLookups::Import() {
  if (store_.remote() == nullptr) return;
  const double now = NowSeconds();
  RemoteTier& remote = *store_.remote();
  std::vector<uint64_t> moves;
  for (RemoteFound& f : remote.TakeFound()) {
    if (auto it = waits_.find(SeqId(f.ticket)); it != waits_.end()) it->second.done = true;
    PrefixIndex& index = store_.index();
    clock_.Advance();
    for (RemoteBlock& b : f.blocks) {
      if (index.Find(b.info.hash) != PrefixIndex::kNone) continue;  // a local tier has it (or gets it)
      if (!alloc_.CanAllocateDevice(1)) break;
      alloc_.PrepareDeviceRoom(1);
      const int32_t slot = alloc_.AllocDeviceSlot();
      if (slot < 0) break;
      const uint32_t eid = store_.Publish(b.info.hash, b.info.parent, b.info.depth, b.info.tokens);
      remote.Stage(b.info.hash, std::move(b.data));
      moves.push_back(mover_.Start(eid, kRemoteTier, kDeviceTier, slot));
      store_.Unref(kDeviceTier, slot);  // the move's pin keeps it; the block is cached once it lands
      clock_.Touch(index.at(eid), -1);
      store_.RefreshEntry(eid);
      imported_++;
    }
  }
  // Landed before the waiting sequences are admitted, so that Match finds them ready.
  for (uint64_t tag : moves) alloc_.WaitFor(tag);
  for (auto it = waits_.begin(); it != waits_.end();) {
    if (now > it->second.deadline_s + kForgetAfterS)
      it = waits_.erase(it);
    else
      ++it;
  }
}

RemoteCounters RemoteLookups::Snapshot() const {
  if (store_.remote() == nullptr) return RemoteCounters{};
  RemoteCounters c = store_.remote()->counters();
  c.imported_blocks = imported_;
  c.abandoned = abandoned_;
  return c;
}

bool RemoteLookups::DrainWrites(double timeout_s) {
  if (store_.remote() == nullptr) return true;
  alloc_.WaitAll();  // write-behind copies still on the mover threads
  return store_.remote()->DrainWrites(timeout_s);
}

}  // namespace pg
