// HostMemory: where the KV cache's host-side block memory comes from (the
// host tier's slots, the movers' staging buffers).
//
// Thread-safety: the functions may be called from any thread.
#pragma once

#include <cstddef>
#include <functional>

namespace pg {

// Where host-side block memory comes from: alloc(bytes) returns 64-byte
// aligned memory or null, free releases it. Empty = ordinary RAM; the device
// executor passes pinned memory (gpuMallocHost) for the host tier and the
// movers' staging.
struct HostMemory {
  std::function<void*(size_t bytes)> alloc;
  std::function<void(void*)> free;
};

}  // namespace pg
