// BlockArena: a bounded, 64-byte aligned array of fixed-size block slots.
//
// The device tier keeps its blocks in one (the memory the kernels read; on the
// CPU backend a RAM arena plays that part), the host tier in another. A GPU
// backend will add an arena whose memory is device memory and whose CopyIn /
// CopyOut go through the driver; callers only use this interface. The cache
// reads and writes block bytes only through CopyIn / CopyOut; BlockPtr is the
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
#include <memory>

#include "base/status.h"

namespace pg {

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

// An arena in ordinary host RAM (used for the CPU backend's device tier and
// for the host tier). Memory is committed lazily by the OS on first touch.
class HostBlockArena final : public BlockArena {
 public:
  // n_blocks may be 0 (a disabled tier). Fails when the allocation fails.
  static Result<std::unique_ptr<HostBlockArena>> Create(int64_t n_blocks, size_t block_bytes);
  ~HostBlockArena() override;

  uint8_t* BlockPtr(int64_t slot) override;
  void CopyIn(int64_t slot, const uint8_t* src) override;
  void CopyOut(int64_t slot, uint8_t* dst) override;

 private:
  HostBlockArena(int64_t n_blocks, size_t block_bytes, uint8_t* base, size_t stride)
      : BlockArena(n_blocks, block_bytes), base_(base), stride_(stride) {}
  uint8_t* base_;  // n_blocks * stride_ bytes
  size_t stride_;  // block_bytes rounded up to 64
};

}  // namespace pg
