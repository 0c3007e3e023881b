// SequenceTable: the sequence table and the verbs that fill it.
#include "kv/sequence_table.h"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "base/check.h"

namespace pg {

Tier SequenceTable::ServingTier(const IndexEntry& e) {
  const int t = e.first_usable();
  return t == kNoTier ? Tier(kLocalTiers - 1) : Tier(t);
}

const SequenceTable::Seq& SequenceTable::seq(SeqId id) const {
  auto it = seqs_.find(id);
  PG_CHECK_MSG(it != seqs_.end(), "unknown sequence");
  return it->second;
}

int64_t SequenceTable::CachedTokens(SeqId id) const {
  const Seq& s = seq(id);
  return s.settled ? s.cached_tokens : 0;
}

bool SequenceTable::CanAppend(SeqId id, int64_t n_new) const {
  const Seq& s = seq(id);
  return CanAllocate(BlocksFor(s.n_tokens + n_new) - int64_t(s.table.size()));
}

void SequenceTable::ProcessCompletions() {
  alloc_.Collect(false);
  SettleAll();
}

void SequenceTable::OpenForKernels(const Seq& s, size_t from) {
  for (size_t i = from; i < s.table.size(); ++i) store_.device().arena().OpenForKernels(s.table[i]);
}

void SequenceTable::CloseForKernels(const Seq& s, size_t from) {
  for (size_t i = from; i < s.table.size(); ++i) store_.device().arena().CloseForKernels(s.table[i]);
}

int32_t SequenceTable::AllocDeviceSlot() {
  const int32_t slot = alloc_.AllocDeviceSlot();
  PG_CHECK_MSG(slot >= 0, "device slot vanished between CanAllocate and allocation");
  return slot;
}

Status SequenceTable::AllocateSequence(SeqId id, PrefixMatch&& match, int64_t total_tokens,
                                       std::vector<BlockId>* table) {
  ProcessCompletions();
  PG_CHECK_MSG(seqs_.find(id) == seqs_.end(), "AllocateSequence: sequence id already allocated");
  if (total_tokens < match.tokens() || total_tokens < 0) {
    return InvalidArgument(fmt::format("AllocateSequence: {} tokens < matched {}", total_tokens, match.tokens()));
  }
  const int64_t n_blocks = BlocksFor(total_tokens);
  const int64_t need = n_blocks - match[kDeviceTier] / page_;
  if (!CanAllocate(need)) {
    match.Release();
    return ResourceExhausted(fmt::format("kv device tier: {} blocks needed, {} free or evictable", need,
                                         store_.device().n_free() + alloc_.EvictableDevice()));
  }
  alloc_.PrepareDeviceRoom(need);
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
    const Tier tier = ServingTier(e);
    store_.accounting().NoteReused(e.hash, tier);
    s.hashes.push_back(e.hash);
    s.matched.push_back(eid);
    if (tier == kDeviceTier) {
      TierCopy& dev = e.copy(kDeviceTier);
      store_.device().Ref(dev.slot);
      s.table.push_back(dev.slot);
      // A copy brought in from Redis counts as tier remote once, by its first reuse.
      s.matched_tier.push_back(dev.filled_from == kRemoteTier ? kRemoteTier : kDeviceTier);
      dev.filled_from = kDeviceTier;
      continue;
    }
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
    alloc_.StartLoad(eid, slot);
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

bool SequenceTable::PromotionReady(SeqId id, std::vector<BlockId>* table) {
  ProcessCompletions();
  const Seq& s = seq(id);
  if (!s.settled) return false;
  *table = s.table;
  return true;
}

void SequenceTable::SettleAll() {
  if (unsettled_.empty()) return;
  std::vector<SeqId> ids(unsettled_.begin(), unsettled_.end());
  for (SeqId id : ids) Settle(id, seqs_.at(id));
}

// Once no load of s is in flight: cut the chain at the first block that did
// not arrive, give the sequence private blocks from there on, unlock.
bool SequenceTable::Settle(SeqId id, Seq& s) {
  PrefixIndex& index = store_.index();
  SlotTier& dev = store_.device();
  for (uint32_t eid : s.loading) {
    const IndexEntry& e = index.at(eid);
    if (e.copy(kDeviceTier).slot >= 0 && !e.copy(kDeviceTier).ready) return false;  // still loading
  }
  size_t cut = 0;
  while (cut < s.matched.size()) {
    const IndexEntry& e = index.at(s.matched[cut]);
    if (!(e.copy(kDeviceTier).slot == s.table[cut] && e.copy(kDeviceTier).ready)) break;
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
    const int32_t fresh = alloc_.AllocDeviceSlot();
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

void SequenceTable::CommitFullBlock(SeqId id, int block_index, std::span<const int32_t> tokens) {
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
  clock_.Advance();
  PrefixIndex& index = store_.index();
  uint32_t eid = index.Find(h);
  if (eid == PrefixIndex::kNone) {
    eid = store_.Publish(h, parent, block_index, tokens);
  } else {
    IndexEntry& e = index.at(eid);
    if (e.copy(kDeviceTier).slot >= 0 || !std::equal(tokens.begin(), tokens.end(), e.tokens.begin(), e.tokens.end())) {
      clock_.Touch(e, s.session);  // another copy serves the index; this block stays private
      store_.RefreshEntry(eid);
      return;
    }
  }
  IndexEntry& e = index.at(eid);
  e.copy(kDeviceTier) = TierCopy{slot, true};
  store_.device().SetOwner(slot, eid);
  store_.counters().tiers[kDeviceTier].bytes_in += int64_t(store_.block_bytes());
  clock_.Touch(e, s.session);
  store_.RefreshEntry(eid);
  if (cfg_.write_policy == WritePolicy::kWriteThrough) alloc_.WriteThrough(eid);
  if (store_.remote() != nullptr) mover_.Start(eid, kDeviceTier, kRemoteTier);  // write-behind to Redis
  hints_.Enforce(s.session);
}

void SequenceTable::FreeSequence(SeqId id) {
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
  hints_.Enforce(session);
}

Status SequenceTable::Append(SeqId id, int64_t n_new, std::vector<BlockId>* table) {
  ProcessCompletions();
  auto it = seqs_.find(id);
  PG_CHECK_MSG(it != seqs_.end(), "Append: unknown sequence");
  if (n_new < 0) return InvalidArgument("Append: negative token count");
  Seq& s = it->second;
  const int64_t need = BlocksFor(s.n_tokens + n_new) - int64_t(s.table.size());
  if (need > 0 && !CanAllocate(need)) {
    return ResourceExhausted(fmt::format("kv device tier: {} blocks needed to grow, none left", need));
  }
  alloc_.PrepareDeviceRoom(need);
  const size_t old_size = s.table.size();
  for (int64_t i = 0; i < need; ++i) s.table.push_back(AllocDeviceSlot());
  if (s.settled) OpenForKernels(s, old_size);  // else Settle opens the whole table
  s.n_tokens += n_new;
  *table = s.table;
  return Status::Ok();
}

}  // namespace pg
