// BlockArena: a bounded, 64-byte aligned array of fixed-size block slots.
//
// The device tier keeps its blocks in one (the memory the kernels read; on the
// CPU backend a RAM arena plays that part), the host tier in another. The GPU
// backend's DeviceBlockArena (src/gpu/executor) keeps them in device memory and
// copies asynchronously on a copy stream; callers only use this interface. The
// cache reads and writes block bytes only through CopyInAsync / CopyOutAsync
// and waits on the CopyDone they return (CopyIn / CopyOut: the same, waited
// for at once); the host memory a device arena copies from or to should be
// pinned (HostMemory, a host arena or staging made with the device's
// allocator) so the copy overlaps compute. BlockPtr is the
// address the forward pass is given (KvCacheManager::DeviceBlockPtr), and the
// forward pass may touch a slot only between OpenForKernels and
// CloseForKernels (the slots of settled sequences' block tables).
//
// Thread-safety: BlockPtr is a pure function of the slot (pointers are stable
// for the arena's life). Copies into distinct slots may run concurrently, and
// with kernels reading other slots or the same (read-only shared) slot;
// Open/CloseForKernels come from the scheduler thread. Slot ownership is
// decided by the caller (BlockPool), not here.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <utility>

#include "base/status.h"
#include "kv/host_memory.h"

namespace pg {

// The completion of one asynchronous block copy. Wait() returns once the
// copy's bytes have landed (the target may be read, the source reused) with
// the copy's status. A default-made one is complete. Each must be waited for
// exactly once before it is dropped (checked): a copy nobody waits for is a bug.
class CopyDone {
 public:
  CopyDone() = default;
  explicit CopyDone(std::function<Status()> wait) : wait_(std::move(wait)) {}
  CopyDone(CopyDone&& o) noexcept : wait_(std::exchange(o.wait_, nullptr)) {}
  CopyDone& operator=(CopyDone&&) = delete;
  ~CopyDone();
  Status Wait();

 private:
  std::function<Status()> wait_;
};

class BlockArena {
 public:
  virtual ~BlockArena() = default;

  int64_t n_blocks() const { return n_blocks_; }
  size_t block_bytes() const { return block_bytes_; }

  // Address of slot `slot` in [0, n_blocks()), 64-byte aligned, stable.
  virtual uint8_t* BlockPtr(int64_t slot) = 0;
  // Copies block_bytes() from host memory `src` into slot / from slot into `dst`.
  virtual void CopyIn(int64_t slot, const uint8_t* src) = 0;
  virtual void CopyOut(int64_t slot, uint8_t* dst) = 0;
  // The same copies started and not waited for: `src` / `dst` must stay
  // valid and untouched until the returned CopyDone's Wait. RAM arenas copy
  // at once (their CopyDone is complete).
  virtual CopyDone CopyInAsync(int64_t slot, const uint8_t* src) {
    CopyIn(slot, src);
    return {};
  }
  virtual CopyDone CopyOutAsync(int64_t slot, uint8_t* dst) {
    CopyOut(slot, dst);
    return {};
  }
  // The forward pass may read / write `slot` until the matching Close (calls
  // nest per slot). No-ops for RAM; a guarded test arena (src/testing) opens
  // the slot's pages only then, and a device arena may map it for kernels.
  virtual void OpenForKernels(int64_t slot) {}
  virtual void CloseForKernels(int64_t slot) {}

 protected:
  BlockArena(int64_t n_blocks, size_t block_bytes) : n_blocks_(n_blocks), block_bytes_(block_bytes) {}

 private:
  int64_t n_blocks_;
  size_t block_bytes_;
};

// An arena in host RAM (used for the CPU backend's device tier, for the host
// tier and for the movers' staging), from `memory`: ordinary RAM committed
// lazily by the OS on first touch, or pinned memory when the device is in use.
class HostBlockArena final : public BlockArena {
 public:
  // n_blocks may be 0 (a disabled tier). Fails when the allocation fails.
  static Result<std::unique_ptr<HostBlockArena>> Create(int64_t n_blocks, size_t block_bytes,
                                                        const HostMemory& memory = {});
  ~HostBlockArena() override;

  uint8_t* BlockPtr(int64_t slot) override;
  void CopyIn(int64_t slot, const uint8_t* src) override;
  void CopyOut(int64_t slot, uint8_t* dst) override;

 private:
  HostBlockArena(int64_t n_blocks, size_t block_bytes, uint8_t* base, size_t stride, std::function<void(void*)> free)
      : BlockArena(n_blocks, block_bytes), base_(base), stride_(stride), free_(std::move(free)) {}
  uint8_t* base_;                    // n_blocks * stride_ bytes
  size_t stride_;                    // block_bytes rounded up to 64
  std::function<void(void*)> free_;  // empty = std::free
};

}  // namespace pg
