// K/V rows into pages: token t's K and V rows (f32, kv_dim each) are rounded
// to the arena's f16 / bf16 (nearest even, as StoreRowF16 / StoreRowBF16)
// and stored at slot_mapping[t] = block * page_tokens + slot of `layer`; the
// host fills slot_mapping from each sequence's block table. A negative
// entry skips its token. Pointers are device memory.
#pragma once

#include <cstdint>

#include "gpu/kernels/kv_pages.cuh"
#include "gpu/runtime/gpu_vendor.h"

namespace pg::gpu {

// k, v: (n_tokens, kv_dim) f32.
gpuError_t WriteKvRows(const float* k, const float* v, int64_t n_tokens, const int32_t* slot_mapping,
                       const DeviceKvPages& kv, int64_t layer, gpuStream_t s);

}  // namespace pg::gpu
