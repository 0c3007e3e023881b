#include "kv/media/block_pool.h"

#include <fmt/format.h>

#include "base/check.h"

namespace pg {

BlockPool::BlockPool(int64_t n_slots) : refs_(size_t(n_slots), 0), is_free_(size_t(n_slots), 1) {
  PG_CHECK(n_slots >= 0 && n_slots < (int64_t(1) << 31));
  free_.reserve(size_t(n_slots));
  // Lowest slots on top, so fresh pools hand out 0, 1, 2, ...
  for (int64_t i = n_slots - 1; i >= 0; --i) free_.push_back(int32_t(i));
}

int32_t BlockPool::Allocate() {
  if (free_.empty()) return -1;
  const int32_t s = free_.back();
  free_.pop_back();
  is_free_[size_t(s)] = 0;
  refs_[size_t(s)] = 1;
  return s;
}

void BlockPool::Ref(int32_t slot) {
  PG_CHECK(slot >= 0 && slot < capacity() && !is_free(slot));
  ++refs_[size_t(slot)];
}

int32_t BlockPool::Unref(int32_t slot) {
  PG_CHECK(slot >= 0 && slot < capacity() && refs_[size_t(slot)] > 0);
  return --refs_[size_t(slot)];
}

void BlockPool::Release(int32_t slot) {
  PG_CHECK(slot >= 0 && slot < capacity() && refs_[size_t(slot)] == 0 && !is_free(slot));
  is_free_[size_t(slot)] = 1;
  free_.push_back(slot);
}

Status BlockPool::CheckIntegrity() const {
  std::vector<uint8_t> seen(refs_.size(), 0);
  for (int32_t s : free_) {
    if (s < 0 || s >= capacity()) return Internal(fmt::format("block pool: free slot {} out of range", s));
    if (seen[size_t(s)]) return Internal(fmt::format("block pool: slot {} twice on the free list", s));
    seen[size_t(s)] = 1;
    if (!is_free_[size_t(s)]) return Internal(fmt::format("block pool: listed slot {} not marked free", s));
    if (refs_[size_t(s)] != 0)
      return Internal(fmt::format("block pool: free slot {} has refcount {}", s, refs_[size_t(s)]));
  }
  for (size_t s = 0; s < refs_.size(); ++s) {
    if (is_free_[s] && !seen[s]) return Internal(fmt::format("block pool: slot {} marked free but not listed", s));
    if (refs_[s] < 0) return Internal(fmt::format("block pool: slot {} has negative refcount", s));
  }
  return Status::Ok();
}

}  // namespace pg
