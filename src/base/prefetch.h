// PrefetchL1: a software prefetch of the cache line holding `p` into L1 that
// the compiler keeps; PrefetchLines: every line of [p, p + bytes), which need
// not start on a line.
//
// GCC 12 drops __builtin_prefetch (and so _mm_prefetch) from a loop it finds
// otherwise free of side effects, e.g. one that walks a block table only to
// prefetch: the loop is deleted as dead (seen in the attention kernels: the
// object code held no prefetch at all). A volatile asm is never deleted.
// Prefetching never faults, so `p` may be any address.
//
// Thread-safety: a hint; no memory is read or written.
#pragma once

#include <cstddef>
#include <cstdint>

namespace pg {

inline void PrefetchL1(const void* p) {
#if defined(__x86_64__) || defined(__i386__)
  __asm__ volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p, 0, 3);
#endif
}

inline void PrefetchLines(const void* p, size_t bytes) {
  const auto begin = reinterpret_cast<uintptr_t>(p);
  for (uintptr_t line = begin & ~uintptr_t{63}; line < begin + bytes; line += 64)
    PrefetchL1(reinterpret_cast<const void*>(line));
}

}  // namespace pg
