// BlockPool: slot bookkeeping for one tier's arena: a reference count per
// slot and a free list.
//
// A slot is in exactly one state:
//   free      on the free list, refcount 0, no owner;
//   held      refcount > 0 (sequences using it, plus in-flight copies that
//             read or write it);
//   cached    refcount 0, not free: an index entry owns it (the manager knows
//             which); it becomes free again through Release().
// Thread-safety: none; the scheduler thread owns it.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"

namespace pg {

class BlockPool {
 public:
  explicit BlockPool(int64_t n_slots);

  int64_t capacity() const { return int64_t(refs_.size()); }
  int64_t n_free() const { return int64_t(free_.size()); }

  // Pops a free slot with refcount 1; -1 when none is free.
  int32_t Allocate();
  void Ref(int32_t slot);
  // Returns the new refcount.
  int32_t Unref(int32_t slot);
  int32_t refcount(int32_t slot) const { return refs_[size_t(slot)]; }
  bool is_free(int32_t slot) const { return is_free_[size_t(slot)] != 0; }
  // Puts a slot with refcount 0 back on the free list.
  void Release(int32_t slot);

  // Free list entries are distinct, in range, marked free, refcount 0; and
  // every slot marked free is on the list.
  Status CheckIntegrity() const;

 private:
  std::vector<int32_t> refs_;     // per slot
  std::vector<uint8_t> is_free_;  // per slot, 1 when on free_
  std::vector<int32_t> free_;     // stack of free slots
};

}  // namespace pg
