#include "gpu/executor/pinned_memory.h"

#include "gpu/runtime/gpu_vendor.h"

namespace pg::gpu {

HostMemory PinnedHostMemory(int device) {
  HostMemory m;
  m.alloc = [device](size_t bytes) -> void* {
    void* p = nullptr;
    if (gpuSetDevice(device) != gpuSuccess || gpuMallocHost(&p, bytes) != gpuSuccess) {
      (void)gpuGetLastError();
      return nullptr;
    }
    return p;
  };
  m.free = [device](void* p) {
    (void)gpuSetDevice(device);
    (void)gpuFreeHost(p);
  };
  return m;
}

}  // namespace pg::gpu
