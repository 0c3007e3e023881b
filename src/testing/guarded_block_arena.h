// GuardedBlockArena: a device-tier arena for tests whose memory the host may
// not touch outside the arena's own calls. Every slot's pages are PROT_NONE
// except while a CopyIn / CopyOut of that slot runs, or between
// OpenForKernels and CloseForKernels (the slots of settled sequences' block
// tables, which the forward pass reads and writes). Any other read or write
// of block bytes -- a mover memcpy, a remote write from the slot, a kernel
// reading a slot no live table holds -- faults (SIGSEGV) at the line that
// made it. What it cannot see: a wrong access to a slot that IS open (a
// kernel reading another open sequence's slot), since open slots are plain
// read/write memory.
//
// Thread-safety: as BlockArena. Copy calls from mover threads and Open/Close
// from the scheduler thread may interleave; a slot's protection changes
// under one mutex, counting its users (open tables + copies in progress).
#pragma once

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

#include "base/status.h"
#include "engine/backend.h"
#include "kv/media/block_arena.h"

namespace pg::test {

class GuardedBlockArena final : public BlockArena {
 public:
  // Slots of block_bytes rounded up to the page size, in one mapping.
  static Result<std::unique_ptr<GuardedBlockArena>> Create(int64_t n_blocks, size_t block_bytes);
  // A KvCacheConfig::device_arena that makes one; *made (if given) points at
  // it while the cache lives.
  static std::function<Result<std::unique_ptr<BlockArena>>(int64_t, size_t)> Factory(GuardedBlockArena** made);
  // The CPU backend with its device tier in one (EngineConfig::backend).
  static std::shared_ptr<const Backend> CpuBackend(GuardedBlockArena** made);
  ~GuardedBlockArena() override;

  uint8_t* BlockPtr(int64_t slot) override;  // the address; touching it needs an open slot
  void CopyIn(int64_t slot, const uint8_t* src) override;
  void CopyOut(int64_t slot, uint8_t* dst) override;
  void OpenForKernels(int64_t slot) override;
  void CloseForKernels(int64_t slot) override;

  int64_t copies() const { return copies_.load(); }  // CopyIn + CopyOut calls so far
  int64_t open_slots() const;                        // slots open for kernels now

 private:
  GuardedBlockArena(int64_t n_blocks, size_t block_bytes, uint8_t* base, size_t stride, size_t mapped);
  void Acquire(int64_t slot, bool kernel);
  void Release(int64_t slot, bool kernel);

  uint8_t* base_;
  size_t stride_;  // block_bytes rounded up to the page size
  size_t mapped_;  // bytes mapped
  mutable std::mutex mu_;
  std::vector<int32_t> users_;   // per slot: open tables + copies running
  std::vector<int32_t> opened_;  // per slot: open tables
  std::atomic<int64_t> copies_{0};
};

}  // namespace pg::test
