// AllocateLarge: memory for large, long-lived read-mostly buffers (repacked
// weights) that a decode step streams through.
//
// A buffer of at least kHugePage bytes starts on a 2 MiB boundary and is
// advised MADV_HUGEPAGE (transparent huge pages in "madvise" mode), so that
// streaming it takes one TLB entry per 2 MiB instead of one per 4 KiB: a
// Mixture-of-Experts step reads a few hundred KiB from each of several
// scattered experts, and under a hypervisor every 4 KiB TLB miss is a
// two-level page walk. The advice is a hint: where the kernel has no huge
// pages the buffer is ordinary memory, and nothing else changes. Resident
// memory is what is touched, as with malloc (the alignment costs address
// space only). Smaller buffers are 64-byte aligned.
//
// Thread-safety: like malloc.
#pragma once

#include <cstddef>
#include <cstdlib>
#include <memory>

namespace pg {

inline constexpr size_t kHugePage = size_t{2} << 20;

// Returns `bytes` of memory aligned as above, or null when out of memory.
// Release with std::free (LargeBuffer does).
void* AllocateLarge(size_t bytes);

// Owns AllocateLarge's memory.
struct FreeLarge {
  void operator()(void* p) const { std::free(p); }
};
template <typename T = void>
using LargeBuffer = std::unique_ptr<T, FreeLarge>;

// Whether `p` starts on a huge page boundary (for tests).
bool IsHugePageAligned(const void* p);

}  // namespace pg
