// Launching a kernel template instantiated per weight type (dequant.cuh's
// WType): the switch MatMul, DequantToBf16, GetRows and GroupedMatMul share.
#pragma once

#include <cstdint>

#include "gpu/kernels/dequant.cuh"
#include "gpu/runtime/gpu_vendor.h"

namespace pg::gpu {

// Elements per quantization block of a row of type t (1 for the float types):
// a row's cols must be a multiple of it.
inline int64_t WTypeBlockElems(WType t) {
  return (t == WType::kQ4_K || t == WType::kQ6_K) ? 256 : t == WType::kQ8_0 ? 32 : 1;
}

}  // namespace pg::gpu

// KERNEL<type>, launched as PG_LAUNCH(KERNEL<type>, grid, block, 0, stream,
// args...), for the six GGUF types; nothing for kFP8_E4M3, whose kernels are
// fp8_matmul.h's (callers handle it first). Used inside namespace pg::gpu.
#define PG_LAUNCH_PER_WTYPE(type, KERNEL, grid, block, stream, ...)                                 \
  switch (type) {                                                                                   \
    case WType::kF32: PG_LAUNCH(KERNEL<WType::kF32>, grid, block, 0, stream, __VA_ARGS__); break;   \
    case WType::kF16: PG_LAUNCH(KERNEL<WType::kF16>, grid, block, 0, stream, __VA_ARGS__); break;   \
    case WType::kBF16: PG_LAUNCH(KERNEL<WType::kBF16>, grid, block, 0, stream, __VA_ARGS__); break; \
    case WType::kQ8_0: PG_LAUNCH(KERNEL<WType::kQ8_0>, grid, block, 0, stream, __VA_ARGS__); break; \
    case WType::kQ4_K: PG_LAUNCH(KERNEL<WType::kQ4_K>, grid, block, 0, stream, __VA_ARGS__); break; \
    case WType::kQ6_K: PG_LAUNCH(KERNEL<WType::kQ6_K>, grid, block, 0, stream, __VA_ARGS__); break; \
    case WType::kFP8_E4M3: break;                                                                   \
  }
