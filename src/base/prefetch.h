// PrefetchL1: a software prefetch of the cache line holding `p` into L1 that
// the compiler keeps.
//
// GCC 12 drops __builtin_prefetch (and so _mm_prefetch) from a loop it finds
// otherwise free of side effects, e.g. one that walks a block table only to
// prefetch: the loop is deleted as dead (seen in the attention kernels: the
// object code held no prefetch at all). A volatile asm is never deleted.
// Prefetching never faults, so `p` may be any address.
//
// Thread-safety: a hint; no memory is read or written.
#pragma once

namespace pg {

inline void PrefetchL1(const void* p) {
#if defined(__x86_64__) || defined(__i386__)
  __asm__ volatile("prefetcht0 %0" : : "m"(*static_cast<const char*>(p)));
#else
  __builtin_prefetch(p, 0, 3);
#endif
}

}  // namespace pg
