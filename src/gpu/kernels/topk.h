// DeepSeek sparse attention's top-k choice on the device (TopKSelect,
// model/topk_select.h, is the reference): for each token t, the k
// highest-scoring of its n_keys[t] causal keys as positions in increasing
// order; ties go to the lower position; a NaN ranks below every number
// (-0 and +0 tie); every key when n_keys[t] <= k.
//
// One block per token: the k-th largest score is found by a bitwise search
// over an order-preserving 32-bit key of each score (32 counting passes),
// then the keys above it and the first ties in position order are written
// in increasing position by a block scan over contiguous chunks. No sort; the
// result is exactly TopKSelect's set, so the same positions.
// All pointers are device memory. Thread-safety: as the stream.
#pragma once

#include <cstdint>

#include "gpu/runtime/gpu_vendor.h"

namespace pg::gpu {

// scores (T, ld); n_keys (T); sel (T, k) positions ascending; sel_n (T) = min(n_keys, k).
gpuError_t TopKRows(const float* scores, int64_t ld, const int32_t* n_keys, int64_t T, int64_t k, int32_t* sel,
                    int32_t* sel_n, gpuStream_t s);

}  // namespace pg::gpu
