// DeviceBlockArena: the KV cache's device tier in device memory (gpuMalloc,
// never managed memory; under PROSGROW_GPU=emulated the emulator's tracked
// device memory). The host never dereferences a slot: the cache moves block
// bytes only through CopyInAsync / CopyOutAsync, each a gpuMemcpyAsync on the
// arena's own non-blocking copy stream followed by a gpuEventRecord; the
// CopyDone's Wait is gpuEventSynchronize on that event (the mover thread
// waits, the scheduler and the executor's stream run on, so copies overlap
// compute). The host memory given should be pinned (the host tier and the
// staging buffers are, through PinnedHostMemory). The device executor's
// kernels read and write the slots through the block tables
// (DeviceExecutor, device_executor.h).
//
// Thread-safety: as BlockArena (copies into distinct slots may run from the
// cache's mover threads while kernels run on the executor's stream); the
// event pool is locked.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "base/status.h"
#include "gpu/runtime/gpu_vendor.h"
#include "kv/media/block_arena.h"

namespace pg::gpu {

class DeviceBlockArena final : public BlockArena {
 public:
  // n_blocks slots of block_bytes (rounded up to 256) in one allocation on
  // GPU `device` (every call sets it: the cache's threads copy too).
  static Result<std::unique_ptr<DeviceBlockArena>> Create(int64_t n_blocks, size_t block_bytes, int device = 0);
  ~DeviceBlockArena() override;

  uint8_t* BlockPtr(int64_t slot) override;                // a device address: never read on the host
  void CopyIn(int64_t slot, const uint8_t* src) override;  // CopyInAsync, waited for
  void CopyOut(int64_t slot, uint8_t* dst) override;
  CopyDone CopyInAsync(int64_t slot, const uint8_t* src) override;
  CopyDone CopyOutAsync(int64_t slot, uint8_t* dst) override;

  // A KvCacheConfig::device_arena making one (the device backend's).
  static std::function<Result<std::unique_ptr<BlockArena>>(int64_t, size_t)> Factory(int device = 0);
  // Whether [p, p + bytes) lies inside an arena made here and still alive
  // (DeviceExecutor::Prepare refuses KV pages anywhere else).
  static bool Contains(const uint8_t* p, size_t bytes);

 private:
  DeviceBlockArena(int64_t n_blocks, size_t block_bytes, uint8_t* base, size_t stride, int device, gpuStream_t copies)
      : BlockArena(n_blocks, block_bytes), base_(base), stride_(stride), device_(device), copies_(copies) {}
  // Records an event after the copy just queued (`queued`: its status) and
  // returns the wait on it.
  CopyDone Fence(gpuError_t queued, const char* what);
  gpuEvent_t TakeEvent();
  void GiveEvent(gpuEvent_t e);

  uint8_t* base_;  // device memory, n_blocks * stride_ bytes
  size_t stride_;
  int device_;
  gpuStream_t copies_;  // the copy stream (non-blocking)
  std::mutex mu_;
  std::vector<gpuEvent_t> events_;  // free completion events, guarded by mu_
};

}  // namespace pg::gpu
