#include "kv/media/staging_pool.h"

#include "base/check.h"

namespace pg {

Result<std::unique_ptr<StagingPool>> StagingPool::Create(int n_buffers, size_t block_bytes, const HostMemory& memory) {
  if (n_buffers < 1) return InvalidArgument("staging pool: needs a buffer");
  PG_ASSIGN_OR_RETURN(std::unique_ptr<HostBlockArena> arena, HostBlockArena::Create(n_buffers, block_bytes, memory));
  return std::unique_ptr<StagingPool>(new StagingPool(std::move(arena)));
}

StagingPool::StagingPool(std::unique_ptr<HostBlockArena> arena) : arena_(std::move(arena)) {
  for (int64_t i = arena_->n_blocks() - 1; i >= 0; --i) free_.push_back(arena_->BlockPtr(i));
}

uint8_t* StagingPool::Acquire() {
  std::lock_guard<std::mutex> lock(mu_);
  PG_CHECK_MSG(!free_.empty(), "kv staging: more copies at once than mover threads");
  uint8_t* b = free_.back();
  free_.pop_back();
  return b;
}

void StagingPool::Release(uint8_t* buffer) {
  std::lock_guard<std::mutex> lock(mu_);
  free_.push_back(buffer);
}

}  // namespace pg
