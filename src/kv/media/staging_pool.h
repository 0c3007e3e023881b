// StagingPool: the host buffers a block copy passes through when neither of
// its media lends host memory (a disk or remote block to or from the device
// tier). One block-sized buffer per mover thread, from the cache's
// HostMemory: pinned memory when the device executor is in use, so the
// device arena's asynchronous copy reads or writes it directly.
//
// Thread-safety: Acquire / Release from any thread (mover jobs); a buffer
// belongs to one job between them.
#pragma once

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "base/status.h"
#include "kv/media/block_arena.h"

namespace pg {

class StagingPool {
 public:
  // n_buffers (>= 1: at least the mover threads) of block_bytes each.
  static Result<std::unique_ptr<StagingPool>> Create(int n_buffers, size_t block_bytes, const HostMemory& memory);

  // A free buffer of block_bytes; there is one per mover thread, so a job that
  // gives its buffer back before it ends always finds one (checked).
  uint8_t* Acquire();
  void Release(uint8_t* buffer);
  int64_t n_buffers() const { return arena_->n_blocks(); }

 private:
  explicit StagingPool(std::unique_ptr<HostBlockArena> arena);

  std::unique_ptr<HostBlockArena> arena_;
  std::mutex mu_;
  std::vector<uint8_t*> free_;  // guarded by mu_
};

}  // namespace pg
