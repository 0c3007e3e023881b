#include "server/responses/responses_store.h"

namespace pg {
namespace {

std::string Key(const std::string& tenant, const std::string& id) { return tenant + '\n' + id; }

}  // namespace

void ResponseStore::Put(const std::string& tenant, const std::string& id, nlohmann::ordered_json conversation) {
  if (capacity_ == 0) return;
  const std::string key = Key(tenant, id);
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(key);
  if (it != entries_.end()) {
    order_.erase(it->second.position);
    entries_.erase(it);
  }
  order_.push_front(key);
  entries_.emplace(key, Entry{std::move(conversation), order_.begin()});
  while (entries_.size() > capacity_) {
    entries_.erase(order_.back());
    order_.pop_back();
  }
}

std::optional<nlohmann::ordered_json> ResponseStore::Get(const std::string& tenant, const std::string& id) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = entries_.find(Key(tenant, id));
  if (it == entries_.end()) return std::nullopt;
  order_.splice(order_.begin(), order_, it->second.position);
  return it->second.conversation;
}

size_t ResponseStore::size() const {
  std::lock_guard<std::mutex> lock(mu_);
  return entries_.size();
}

}  // namespace pg
