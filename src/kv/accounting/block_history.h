// BlockHistory: a bounded memory of every block the cache ever published,
// and of every parent that ever had a published child. It answers "was this
// block ever held?" (evicted vs never seen) and "did this prefix ever go on
// differently?" (diverged) after the prefix index has forgotten the blocks.
//
// Two fixed tables of 64-bit fingerprints (ghost_index.h), 4-way buckets; a
// full bucket overwrites one of its slots, so very old blocks are forgotten
// (they then count as never seen). Memory: 8 bytes a slot, allocated on the
// first insert.
//
// Thread-safety: none; the scheduler thread owns it.
#pragma once

#include <cstdint>
#include <vector>

namespace pg {

class FingerprintSet {
 public:
  explicit FingerprintSet(int64_t slots);  // rounded up to a power of two, at least 4
  void Insert(uint64_t fp);
  bool Contains(uint64_t fp) const;
  int64_t slots() const { return slots_; }

 private:
  int64_t slots_;
  std::vector<uint64_t> table_;  // 0 = empty
};

class BlockHistory {
 public:
  explicit BlockHistory(int64_t slots = 1 << 20) : seen_(slots), parents_(slots / 4) {}
  // A block (fingerprint of its hash) with the given parent was published.
  void NotePublished(uint64_t block_fp, uint64_t parent_fp) {
    seen_.Insert(block_fp);
    parents_.Insert(parent_fp);
  }
  bool Seen(uint64_t block_fp) const { return seen_.Contains(block_fp); }
  bool HadChild(uint64_t parent_fp) const { return parents_.Contains(parent_fp); }

 private:
  FingerprintSet seen_;
  FingerprintSet parents_;
};

}  // namespace pg
