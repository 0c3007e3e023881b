#include "base/large_alloc.h"

#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>

namespace pg {

void* AllocateLarge(size_t bytes) {
  const size_t align = bytes >= kHugePage ? kHugePage : 64;
  void* p = nullptr;
  // posix_memalign: no size-multiple rule; the tail past the last whole
  // 2 MiB stays in small pages, so the buffer never grows resident memory.
  if (posix_memalign(&p, align, bytes == 0 ? 1 : bytes) != 0) return nullptr;
  if (align == kHugePage) (void)madvise(p, bytes, MADV_HUGEPAGE);
  return p;
}

bool IsHugePageAligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kHugePage == 0; }

}  // namespace pg
