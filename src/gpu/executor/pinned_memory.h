// PinnedHostMemory: the KV cache's HostMemory (kv/host_memory.h) in pinned
// (page-locked) host memory from gpuMallocHost, so the device arena's
// asynchronous copies to and from the host tier and the movers' staging
// buffers run as DMA on the copy stream instead of through the driver's
// pageable bounce buffers.
//
// Thread-safety: the functions may be called from any thread.
#pragma once

#include "kv/host_memory.h"

namespace pg::gpu {

// Allocations on GPU `device` (gpuSetDevice before each: the cache's threads allocate too).
HostMemory PinnedHostMemory(int device = 0);

}  // namespace pg::gpu
