#include "route/replica_index.h"

#include <xxhash.h>

#include <algorithm>
#include <cstring>
#include <variant>

#include "base/locked_copy.h"

namespace pg {
namespace {

const char* const kMedia[] = {kMediumDevice, kMediumHost, kMediumDisk, kMediumRemote};

int MediumBit(const std::string& medium) {
  for (int i = 0; i < 4; ++i)
    if (medium == kMedia[i]) return i;
  return 4;  // another medium: held, but not a known tier
}

}  // namespace

uint64_t ReplicaIndex::ChildKey(bool has_parent, EventBlockHash parent, std::span<const int32_t> tokens) {
  uint64_t seed = has_parent ? parent : 0x9e3779b97f4a7c15ull;
  return XXH3_64bits_withSeed(tokens.data(), tokens.size_bytes(), seed);
}

void ReplicaIndex::Stored(const BlockStoredEvent& e) {
  if (e.block_size <= 0 || e.block_size > kMaxBlockSize) return;
  // Token ids are all there or absent (hashes only); anything else is malformed.
  const bool with_tokens = !e.token_ids.empty();
  if (with_tokens && e.token_ids.size() != e.block_hashes.size() * size_t(e.block_size)) return;
  block_size_ = e.block_size;
  const int bit = MediumBit(e.medium);
  bool has_parent = e.parent_block_hash.has_value();
  EventBlockHash parent = e.parent_block_hash.value_or(0);
  for (size_t i = 0; i < e.block_hashes.size(); ++i) {
    std::span<const int32_t> tokens;
    if (with_tokens) tokens = {e.token_ids.data() + i * e.block_size, size_t(e.block_size)};
    auto it = blocks_.find(e.block_hashes[i]);
    if (it == blocks_.end()) {
      if (blocks_.size() >= max_blocks_) {  // full: the rest of this chain is not recorded either
        dropped_ += e.block_hashes.size() - i;
        return;
      }
      it = blocks_.emplace(e.block_hashes[i], Block{}).first;
    }
    Block& b = it->second;
    if (b.media == 0) {
      b.has_parent = has_parent;
      b.parent = parent;
      b.tokens.assign(tokens.begin(), tokens.end());
      if (with_tokens) child_[ChildKey(has_parent, parent, tokens)] = e.block_hashes[i];
    }
    b.media |= uint8_t(1u << bit);
    has_parent = true;
    parent = e.block_hashes[i];
  }
}

void ReplicaIndex::Removed(const BlockRemovedEvent& e) {
  const int bit = MediumBit(e.medium);
  for (EventBlockHash h : e.block_hashes) {
    auto it = blocks_.find(h);
    if (it == blocks_.end()) continue;
    it->second.media &= uint8_t(~(1u << bit));
    if (it->second.media == 0) {
      if (!it->second.tokens.empty())
        child_.erase(ChildKey(it->second.has_parent, it->second.parent, it->second.tokens));
      blocks_.erase(it);
    }
  }
}

void ReplicaIndex::Apply(const KvEventBatch& batch) {
  std::lock_guard<std::mutex> lock(mu_);
  for (const KvEvent& ev : batch.events) {
    if (const auto* s = std::get_if<BlockStoredEvent>(&ev)) {
      Stored(*s);
    } else if (const auto* r = std::get_if<BlockRemovedEvent>(&ev)) {
      Removed(*r);
    } else {
      blocks_.clear();
      child_.clear();
    }
  }
}

void ReplicaIndex::Clear() {
  std::lock_guard<std::mutex> lock(mu_);
  blocks_.clear();
  child_.clear();
}

ReplicaIndex::Match ReplicaIndex::Longest(std::span<const int32_t> prompt) const {
  std::lock_guard<std::mutex> lock(mu_);
  Match m;
  if (block_size_ <= 0) return m;
  bool has_parent = false, device_run = true;
  EventBlockHash parent = 0;
  for (size_t at = 0; at + block_size_ <= prompt.size(); at += block_size_) {
    auto tokens = prompt.subspan(at, size_t(block_size_));
    auto c = child_.find(ChildKey(has_parent, parent, tokens));
    if (c == child_.end()) break;
    auto b = blocks_.find(c->second);
    if (b == blocks_.end() ||
        !std::equal(tokens.begin(), tokens.end(), b->second.tokens.begin(), b->second.tokens.end()))
      break;
    m.tokens += block_size_;
    device_run = device_run && (b->second.media & 1);
    if (device_run) m.device_tokens += block_size_;
    has_parent = true;
    parent = c->second;
  }
  return m;
}

ReplicaIndex::Match ReplicaIndex::LongestByHashes(std::span<const EventBlockHash> block_hashes) const {
  std::lock_guard<std::mutex> lock(mu_);
  Match m;
  if (block_size_ <= 0) return m;
  bool device_run = true;
  for (size_t i = 0; i < block_hashes.size(); ++i) {
    auto b = blocks_.find(block_hashes[i]);
    if (b == blocks_.end()) break;
    // The same chain: block 0 has no parent, block i's parent is block i-1.
    const bool chained =
        i == 0 ? !b->second.has_parent : b->second.has_parent && b->second.parent == block_hashes[i - 1];
    if (!chained) break;
    m.tokens += block_size_;
    device_run = device_run && (b->second.media & 1);
    if (device_run) m.device_tokens += block_size_;
  }
  return m;
}

size_t ReplicaIndex::blocks() const {
  std::lock_guard<std::mutex> lock(mu_);
  return blocks_.size();
}

std::unordered_map<std::string, int64_t> ReplicaIndex::BlocksPerMedium() const {
  std::lock_guard<std::mutex> lock(mu_);
  std::unordered_map<std::string, int64_t> out;
  for (const auto& [h, b] : blocks_)
    for (int i = 0; i < 5; ++i)
      if (b.media & (1u << i)) out[i < 4 ? kMedia[i] : "other"]++;
  return out;
}

size_t ReplicaIndex::BlockBytes() const {
  std::lock_guard<std::mutex> lock(mu_);
  return kBlockOverheadBytes + 4 * size_t(block_size_ > 0 ? block_size_ : 16);
}

uint64_t ReplicaIndex::dropped() const { return LockedCopy(mu_, dropped_); }

int ReplicaIndex::block_size() const { return LockedCopy(mu_, block_size_); }

}  // namespace pg
