// GhostIndex: a bounded memory of recently evicted blocks, one ring per tier,
// for the cache's "what if this tier were bigger" estimate and for telling an
// evicted block from one never seen (miss_accounting.h).
//
// Each tier keeps the fingerprints of the last `capacity` blocks evicted from
// it, in eviction order (an ordinal per eviction). A block that comes back
// (re-published, or found again in a lower tier) is forgotten. rank(x) = how
// many remembered blocks of that tier were evicted after x. Under LRU, a
// block of rank r would still have been in the tier had it held r + 1 more
// blocks: the blocks pushed out after x and not reused since are exactly
// those that would sit between x and the tier's old capacity (the LRU stack
// distance beyond the capacity). So "K more blocks" hits x iff rank(x) < K.
//
// Fingerprints are the first 64 bits of the chained block hash; a collision
// only skews the accounting, never what is served. Memory per tier is about
// 40 bytes per remembered block, allocated on the first eviction.
//
// Thread-safety: none; the scheduler thread owns it.
#pragma once

#include <cstdint>
#include <unordered_map>
#include <vector>

#include "kv/index/block_hash.h"

namespace pg {

uint64_t Fingerprint(const BlockHash& h);

class GhostIndex {
 public:
  static constexpr int kTiers = 3;  // kDeviceTier, kHostTier, kDiskTier

  struct Record {
    int64_t rank = 0;         // remembered blocks of the tier evicted after this one
    double evicted_at_s = 0;  // clock time of the eviction
    uint64_t stamp = 0;       // order of the eviction across all tiers (larger = later)
  };

  explicit GhostIndex(int64_t capacity_per_tier = 1 << 16);

  int64_t capacity() const { return cap_; }
  // Block fp left `tier` at now_s (pushed out to make room).
  void NoteEvicted(int tier, uint64_t fp, double now_s);
  // fp is cached again: drop its records in tiers [0, below_tier).
  void Forget(uint64_t fp, int below_tier = kTiers);
  // The record of fp in `tier`, or false.
  bool Find(int tier, uint64_t fp, Record* out) const;
  int64_t size(int tier) const { return int64_t(rings_[tier].ordinal_of.size()); }

 private:
  struct Ring {
    std::vector<uint64_t> fp;     // [ordinal % cap]
    std::vector<double> at_s;     // [ordinal % cap]
    std::vector<uint64_t> stamp;  // [ordinal % cap]: GhostIndex-wide eviction order
    std::vector<int32_t> tree;    // Fenwick tree over positions: 1 per remembered block
    std::unordered_map<uint64_t, uint64_t> ordinal_of;
    uint64_t next = 0;  // ordinals issued so far
  };
  void Add(Ring& r, int64_t pos, int32_t delta) const;
  int64_t Prefix(const Ring& r, int64_t pos) const;  // sum over positions [0, pos]
  int64_t Range(const Ring& r, int64_t a, int64_t b) const;
  void Remove(Ring& r, uint64_t ordinal);

  int64_t cap_;
  uint64_t stamp_ = 0;  // evictions noted, all tiers
  Ring rings_[kTiers];
};

}  // namespace pg
