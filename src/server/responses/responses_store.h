// ResponseStore: the responses created with `store: true`, kept so a later
// request can continue one with `previous_response_id` (Responses API).
//
// Each entry holds the conversation as chat messages up to and including the
// response's own output (instructions excluded: they apply to one request
// only, as in OpenAI's API). Bounded: at most `capacity` entries, the least
// recently used (created or continued) dropped first; entries live in memory
// only and are lost on restart. `tenant` scopes ids once API-key tenants
// exist ("" = the one tenant).
//
// Thread-safety: all methods may be called concurrently (one mutex).
#pragma once

#include <cstddef>
#include <list>
#include <mutex>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <unordered_map>

namespace pg {

class ResponseStore {
 public:
  explicit ResponseStore(size_t capacity) : capacity_(capacity) {}

  void Put(const std::string& tenant, const std::string& id, nlohmann::ordered_json conversation);
  // The stored conversation, marked recently used; nullopt when unknown or dropped.
  std::optional<nlohmann::ordered_json> Get(const std::string& tenant, const std::string& id);

  size_t size() const;
  size_t capacity() const { return capacity_; }

 private:
  using Order = std::list<std::string>;  // keys, most recent first
  struct Entry {
    nlohmann::ordered_json conversation;
    Order::iterator position;
  };

  const size_t capacity_;
  mutable std::mutex mu_;
  Order order_;
  std::unordered_map<std::string, Entry> entries_;
};

}  // namespace pg
