#include "engine/backend.h"

#include "engine/cpu_executor.h"

namespace pg {

Result<std::unique_ptr<Executor>> CpuBackend::MakeExecutor(const Model& model, ThreadPool& pool) const {
  return std::unique_ptr<Executor>(std::make_unique<CpuExecutor>(model, pool));
}

Result<std::unique_ptr<BlockArena>> CpuBackend::MakeDeviceArena(int64_t n_blocks, size_t block_bytes) const {
  PG_ASSIGN_OR_RETURN(std::unique_ptr<HostBlockArena> arena, HostBlockArena::Create(n_blocks, block_bytes));
  return std::unique_ptr<BlockArena>(std::move(arena));
}

std::shared_ptr<const Backend> DefaultCpuBackend() {
  static const std::shared_ptr<const Backend> cpu = std::make_shared<CpuBackend>();
  return cpu;
}

}  // namespace pg
