#include "route/affinity_table.h"

#define XXH_STATIC_LINKING_ONLY  // XXH3_state_t on the stack
#include <xxhash.h>

namespace pg {

AffinityKey MakeAffinityKey(std::string_view credentials, std::string_view name) {
  XXH3_state_t state;
  XXH3_128bits_reset(&state);
  const uint64_t sizes[2] = {credentials.size(), name.size()};  // "ab"+"c" and "a"+"bc" differ
  XXH3_128bits_update(&state, sizes, sizeof(sizes));
  XXH3_128bits_update(&state, credentials.data(), credentials.size());
  XXH3_128bits_update(&state, name.data(), name.size());
  const XXH128_hash_t h = XXH3_128bits_digest(&state);
  return AffinityKey{h.low64, h.high64};
}

AffinityTable::AffinityTable(size_t capacity, size_t replicas) : capacity_(capacity), per_replica_(replicas, 0) {}

int AffinityTable::Find(const AffinityKey& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = homes_.find(key);
  return it == homes_.end() ? -1 : it->second.replica;
}

void AffinityTable::Record(const AffinityKey& key, int replica) {
  if (capacity_ == 0 || replica < 0 || size_t(replica) >= per_replica_.size()) return;
  std::lock_guard<std::mutex> lock(mu_);
  if (auto it = homes_.find(key); it != homes_.end()) {
    per_replica_[it->second.replica]--;
    it->second.replica = replica;
    lru_.splice(lru_.begin(), lru_, it->second.lru);
    per_replica_[replica]++;
    return;
  }
  while (!lru_.empty() && homes_.size() >= capacity_) {
    auto old = homes_.find(lru_.back());
    per_replica_[old->second.replica]--;
    homes_.erase(old);
    lru_.pop_back();
  }
  lru_.push_front(key);
  homes_.emplace(key, Home{replica, lru_.begin()});
  per_replica_[replica]++;
}

void AffinityTable::Forget(const AffinityKey& key) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = homes_.find(key);
  if (it == homes_.end()) return;
  per_replica_[it->second.replica]--;
  lru_.erase(it->second.lru);
  homes_.erase(it);
}

size_t AffinityTable::entries() const {
  std::lock_guard<std::mutex> lock(mu_);
  return homes_.size();
}

int64_t AffinityTable::on_replica(size_t i) const {
  std::lock_guard<std::mutex> lock(mu_);
  return i < per_replica_.size() ? per_replica_[i] : 0;
}

}  // namespace pg
