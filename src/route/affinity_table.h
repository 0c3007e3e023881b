// AffinityTable: which replica a name belongs to (a client's session, or a
// Responses answer that a later previous_response_id continues), bounded in
// entries and in bytes. A name is never kept: its key is a 128-bit digest of
// the client's credentials and the name (AffinityKey), so every entry has
// the same size (kEntryBytes) whatever the client sent, and a table of
// `capacity` entries holds at most capacity * kEntryBytes bytes. Full, it
// forgets its least recently used entry first.
//
// The router records an entry only after a replica answered the request 2xx
// (a refused key or a bad request leaves no trace).
//
// Thread-safety: every method locks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <list>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace pg {

struct AffinityKey {
  uint64_t lo = 0, hi = 0;
  bool operator==(const AffinityKey& o) const { return lo == o.lo && hi == o.hi; }
};

// The key of `name` for the client presenting `credentials` (its
// Authorization and x-api-key headers): two tenants' names never meet.
AffinityKey MakeAffinityKey(std::string_view credentials, std::string_view name);

class AffinityTable {
 public:
  // Bytes one entry costs at most: the key, the replica, the hash map's node
  // and bucket, the LRU list's node, and the allocator's headers.
  static constexpr size_t kEntryBytes = 128;

  // `replicas`: how many replicas indices may name (per-replica counts).
  AffinityTable(size_t capacity, size_t replicas);

  // The replica recorded for key; -1 when none.
  int Find(const AffinityKey& key);
  // Records (or moves) key on replica, most recently used.
  void Record(const AffinityKey& key, int replica);
  void Forget(const AffinityKey& key);

  size_t entries() const;
  size_t bytes() const { return entries() * kEntryBytes; }
  size_t capacity() const { return capacity_; }
  size_t bound_bytes() const { return capacity_ * kEntryBytes; }
  // Entries whose replica is i.
  int64_t on_replica(size_t i) const;

 private:
  struct Hash {
    size_t operator()(const AffinityKey& k) const { return size_t(k.lo ^ (k.hi * 0x9e3779b97f4a7c15ull)); }
  };
  struct Home {
    int replica = -1;
    std::list<AffinityKey>::iterator lru;
  };
  const size_t capacity_;
  mutable std::mutex mu_;
  std::unordered_map<AffinityKey, Home, Hash> homes_;
  std::list<AffinityKey> lru_;  // most recently used first
  std::vector<int64_t> per_replica_;
};

}  // namespace pg
