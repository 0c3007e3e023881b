#include "constrain/constraint_cache.h"

#include <utility>

namespace pg {

ConstraintCache& ConstraintCache::Global() {
  static ConstraintCache* cache = new ConstraintCache();  // never destroyed: outlives every request
  return *cache;
}

Result<std::shared_ptr<const CompiledConstraint>> ConstraintCache::GetOrBuild(
    const std::string& key, std::shared_ptr<const TokenVocabulary> vocab, const std::string& description,
    const Builder& build) {
  const std::string full = std::to_string(vocab->fingerprint()) + '\n' + key;
  {
    std::lock_guard<std::mutex> lk(mu_);
    if (auto it = entries_.find(full); it != entries_.end()) {
      lru_.splice(lru_.begin(), lru_, it->second.second);
      return it->second.first;
    }
  }
  Result<Grammar> grammar = build();  // outside the lock
  if (!grammar.ok()) return grammar.status();
  auto compiled = std::make_shared<const CompiledConstraint>(std::move(*grammar), std::move(vocab), description);
  std::lock_guard<std::mutex> lk(mu_);
  ++builds_;
  if (auto it = entries_.find(full); it != entries_.end()) return it->second.first;
  lru_.push_front(full);
  entries_.emplace(full, std::make_pair(compiled, lru_.begin()));
  if (entries_.size() > kMaxEntries) {
    entries_.erase(lru_.back());
    lru_.pop_back();
  }
  return std::shared_ptr<const CompiledConstraint>(compiled);
}

size_t ConstraintCache::size() const {
  std::lock_guard<std::mutex> lk(mu_);
  return entries_.size();
}

int64_t ConstraintCache::builds() const {
  std::lock_guard<std::mutex> lk(mu_);
  return builds_;
}

}  // namespace pg
