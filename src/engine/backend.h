// Backend: one object per place the forward pass can run, giving everything
// that place owns: the executor (executor.h) that runs the model's steps, the
// memory of the KV cache's device tier (a BlockArena the kernels read), and
// the host memory the host tier and the movers stage through (pinned when a
// GPU copies from it). The engine, `bench-model` and the tests take a
// Backend instead of loose factories: CpuBackend() here, the device
// backend in src/gpu/executor/device_backend.h (--device cuda), and test
// backends (src/testing) that wrap the CPU one.
//
// Thread-safety: const methods; a Backend may be shared by engines.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "base/status.h"
#include "engine/executor.h"
#include "kv/host_memory.h"
#include "kv/media/block_arena.h"

namespace pg {

class Model;
class ThreadPool;

class Backend {
 public:
  virtual ~Backend() = default;
  // "cpu", "cuda:0", ...: the engine's log line and errors name it.
  virtual std::string name() const = 0;
  // The forward pass of `model` (which, like `pool`, outlives it).
  virtual Result<std::unique_ptr<Executor>> MakeExecutor(const Model& model, ThreadPool& pool) const = 0;
  // The device tier's arena: n_blocks slots of block_bytes (n_blocks may be 0).
  virtual Result<std::unique_ptr<BlockArena>> MakeDeviceArena(int64_t n_blocks, size_t block_bytes) const = 0;
  // Where host-side block memory comes from (empty = ordinary RAM).
  virtual HostMemory host_memory() const = 0;
};

// The CPU: CpuExecutor on the engine's pool, the device tier in RAM.
class CpuBackend : public Backend {
 public:
  std::string name() const override { return "cpu"; }
  Result<std::unique_ptr<Executor>> MakeExecutor(const Model& model, ThreadPool& pool) const override;
  Result<std::unique_ptr<BlockArena>> MakeDeviceArena(int64_t n_blocks, size_t block_bytes) const override;
  HostMemory host_memory() const override { return {}; }
};

// The shared CPU backend (EngineConfig::backend's default).
std::shared_ptr<const Backend> DefaultCpuBackend();

}  // namespace pg
