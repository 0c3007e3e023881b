#include "kv/media/block_arena.h"

#include <fmt/format.h>

#include <cstdlib>
#include <cstring>

#include "base/check.h"
#include "base/large_alloc.h"
#include "base/units.h"

namespace pg {

CopyDone::~CopyDone() { PG_CHECK_MSG(!wait_, "kv arena: an asynchronous block copy was never waited for"); }

Status CopyDone::Wait() {
  if (!wait_) return Status::Ok();
  const std::function<Status()> wait = std::exchange(wait_, nullptr);
  return wait();
}

Result<std::unique_ptr<HostBlockArena>> HostBlockArena::Create(int64_t n_blocks, size_t block_bytes,
                                                               const HostMemory& memory) {
  if (n_blocks < 0 || block_bytes == 0) return InvalidArgument("block arena: bad geometry");
  const size_t stride = (block_bytes + 63) / 64 * 64;
  if (n_blocks > 0 && size_t(n_blocks) > (size_t(1) << 50) / stride) {
    return InvalidArgument("block arena: too large");
  }
  const size_t total = std::max<size_t>(64, size_t(n_blocks) * stride);
  // Ordinary RAM comes from AllocateLarge: an arena of 2 MiB or more sits in
  // huge pages, so attention walking a sequence's scattered blocks does not
  // take a TLB miss per 4 KiB (released with std::free like aligned_alloc's).
  auto* base = static_cast<uint8_t*>(memory.alloc ? memory.alloc(total) : AllocateLarge(total));
  if (base == nullptr) {
    return ResourceExhausted(fmt::format("block arena: cannot allocate {}", FormatBytes(total)));
  }
  PG_CHECK(reinterpret_cast<uintptr_t>(base) % 64 == 0);
  return std::unique_ptr<HostBlockArena>(new HostBlockArena(n_blocks, block_bytes, base, stride, memory.free));
}

HostBlockArena::~HostBlockArena() {
  if (free_) {
    free_(base_);
  } else {
    std::free(base_);
  }
}

uint8_t* HostBlockArena::BlockPtr(int64_t slot) {
  PG_CHECK(slot >= 0 && slot < n_blocks());
  return base_ + size_t(slot) * stride_;
}

void HostBlockArena::CopyIn(int64_t slot, const uint8_t* src) { std::memcpy(BlockPtr(slot), src, block_bytes()); }

void HostBlockArena::CopyOut(int64_t slot, uint8_t* dst) { std::memcpy(dst, BlockPtr(slot), block_bytes()); }

}  // namespace pg
