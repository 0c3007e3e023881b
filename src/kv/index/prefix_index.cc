#include "kv/index/prefix_index.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/check.h"
#include "kv/index/kv_block_observer.h"

namespace pg {

uint32_t PrefixIndex::Find(const BlockHash& hash) const {
  auto it = map_.find(hash);
  return it == map_.end() ? kNone : it->second;
}

uint32_t PrefixIndex::Insert(const BlockHash& hash, const BlockHash& parent, int32_t depth,
                             std::span<const int32_t> tokens) {
  PG_CHECK(map_.find(hash) == map_.end());
  uint32_t id;
  if (!free_ids_.empty()) {
    id = free_ids_.back();
    free_ids_.pop_back();
  } else {
    id = uint32_t(entries_.size());
    entries_.emplace_back();
  }
  IndexEntry& e = entries_[id];
  e = IndexEntry{};
  e.hash = hash;
  e.parent = parent;
  e.depth = depth;
  e.tokens.assign(tokens.begin(), tokens.end());
  e.live = true;
  map_.emplace(hash, id);
  children_[parent].any++;
  return id;
}

void PrefixIndex::Erase(uint32_t id) {
  IndexEntry& e = entries_[id];
  PG_CHECK(e.live);
  PG_CHECK(!e.in_any_tier() && e.locks == 0);
  Refresh(id, 0);  // drops eviction keys; present_mask is already 0
  auto it = children_.find(e.parent);
  PG_CHECK(it != children_.end() && it->second.any > 0);
  if (--it->second.any == 0) children_.erase(it);
  map_.erase(e.hash);
  e.live = false;
  e.tokens.clear();
  free_ids_.push_back(id);
}

void PrefixIndex::AdjustChildren(const BlockHash& parent, uint8_t old_mask, uint8_t new_mask) {
  if (old_mask == new_mask) return;
  ChildCounts& c = children_[parent];  // exists while the child is live (any > 0)
  for (int t = 0; t < kLocalTiers; ++t) {
    const int was = (old_mask >> t) & 1, now = (new_mask >> t) & 1;
    c.in_tier[t] += now - was;
    PG_CHECK(c.in_tier[t] >= 0);
  }
}

void PrefixIndex::Refresh(uint32_t id, uint8_t evictable_mask) {
  IndexEntry& e = entries_[id];
  PG_CHECK(e.live);
  const uint8_t present = e.held_mask();
  AdjustChildren(e.parent, e.present_mask, present);
  if (observer_ != nullptr && present != e.present_mask) {
    for (int t = 0; t < kLocalTiers; ++t) {
      const bool was = (e.present_mask >> t) & 1, now = (present >> t) & 1;
      if (now && !was) observer_->OnBlockStored(t, e);
      if (was && !now) observer_->OnBlockRemoved(t, e);
    }
  }
  e.present_mask = present;
  evictable_mask &= present;
  if (evictable_mask == e.evictable_mask && e.keyed_tick == e.last_tick) return;
  for (int t = 0; t < kLocalTiers; ++t) {
    if ((e.evictable_mask >> t) & 1) evict_[t].erase(EvictKey{e.keyed_tick, -e.depth, id});
    if ((evictable_mask >> t) & 1) evict_[t].insert(EvictKey{e.last_tick, -e.depth, id});
  }
  e.evictable_mask = evictable_mask;
  e.keyed_tick = e.last_tick;
}

void PrefixIndex::set_observer(KvBlockObserver* observer) {
  observer_ = observer;
  if (observer == nullptr) return;
  std::vector<uint32_t> held;
  for (uint32_t id = 0; id < id_limit(); ++id)
    if (entries_[id].live && entries_[id].present_mask != 0) held.push_back(id);
  std::sort(held.begin(), held.end(), [&](uint32_t a, uint32_t b) { return entries_[a].depth < entries_[b].depth; });
  for (uint32_t id : held)
    for (int t = 0; t < kLocalTiers; ++t)
      if ((entries_[id].present_mask >> t) & 1) observer->OnBlockStored(t, entries_[id]);
}

int32_t PrefixIndex::children_in(const BlockHash& hash, int t) const {
  auto it = children_.find(hash);
  return it == children_.end() ? 0 : it->second.in_tier[t];
}

int32_t PrefixIndex::children_any(const BlockHash& hash) const {
  auto it = children_.find(hash);
  return it == children_.end() ? 0 : it->second.any;
}

void PrefixIndex::MatchChain(const BlockHash& root, std::span<const int32_t> tokens, int page_tokens,
                             int64_t max_blocks, const BlockHashKey& key, std::vector<uint32_t>* out) const {
  BlockHash h = root;
  const int64_t n_blocks = std::min<int64_t>(max_blocks, int64_t(tokens.size()) / page_tokens);
  for (int64_t b = 0; b < n_blocks; ++b) {
    auto block = tokens.subspan(size_t(b * page_tokens), size_t(page_tokens));
    h = ChainHash(h, block, key);
    const uint32_t id = Find(h);
    if (id == kNone) return;
    const IndexEntry& e = entries_[id];
    if (!std::equal(block.begin(), block.end(), e.tokens.begin(), e.tokens.end())) return;
    out->push_back(id);
  }
}

Status PrefixIndex::CheckIntegrity() const {
  std::unordered_map<BlockHash, ChildCounts, BlockHashHasher> want;
  size_t n_live = 0;
  size_t n_keys[kLocalTiers] = {0, 0, 0};
  for (uint32_t id = 0; id < entries_.size(); ++id) {
    const IndexEntry& e = entries_[id];
    if (!e.live) continue;
    ++n_live;
    auto it = map_.find(e.hash);
    if (it == map_.end() || it->second != id) return Internal(fmt::format("prefix index: entry {} not mapped", id));
    if (e.depth > 0 && e.parent == e.hash) return Internal(fmt::format("prefix index: entry {} is its own parent", id));
    const uint32_t pid = Find(e.parent);
    if (pid != kNone && entries_[pid].depth + 1 != e.depth) {
      return Internal(
          fmt::format("prefix index: entry {} depth {} but parent depth {}", id, e.depth, entries_[pid].depth));
    }
    if (e.locks < 0) return Internal(fmt::format("prefix index: entry {} negative locks", id));
    ChildCounts& c = want[e.parent];
    c.any++;
    // Whole masks compared: GCC 12 -O1/-O2 miscompiles (slot >= 0) != ((mask >> t) & 1) in a loop.
    const uint8_t held = e.held_mask();
    for (int t = 0; t < kLocalTiers; ++t) {
      const uint8_t bit = uint8_t(1u << t);
      if ((held & bit) != (e.present_mask & bit)) {
        return Internal(fmt::format("prefix index: entry {} stale presence for {}", id, TierName(t)));
      }
      if (held & bit) c.in_tier[t]++;
      if ((e.evictable_mask >> t) & 1) {
        ++n_keys[t];
        if (!evict_[t].count(EvictKey{e.keyed_tick, -e.depth, id})) {
          return Internal(fmt::format("prefix index: entry {} missing from {} eviction set", id, TierName(t)));
        }
      }
    }
  }
  if (n_live != map_.size()) return Internal("prefix index: map size differs from live entries");
  for (int t = 0; t < kLocalTiers; ++t) {
    if (n_keys[t] != evict_[t].size())
      return Internal(fmt::format("prefix index: stray keys in {} eviction set", TierName(t)));
  }
  if (want.size() != children_.size()) return Internal("prefix index: child-count map has stray parents");
  for (const auto& [h, c] : want) {
    auto it = children_.find(h);
    if (it == children_.end() || it->second.any != c.any) return Internal("prefix index: wrong child count");
    for (int t = 0; t < kLocalTiers; ++t)
      if (it->second.in_tier[t] != c.in_tier[t]) return Internal("prefix index: wrong per-tier child count");
  }
  return Status::Ok();
}

}  // namespace pg
