// DeviceOptions: how a DeviceExecutor (device_executor.h) runs. A header of
// its own, free of the GPU runtime's headers, so the command line
// (apps/device_flag.cc, compiled without them) can fill it in.
#pragma once

#include <cstdint>

namespace pg::gpu {

struct DeviceOptions {
  int device = 0;  // the GPU ordinal (cuda:N)
  // Steps of at least this many tokens (prefill) run their dense products
  // (q/k/v, output, dense FFN, shared expert) as bf16 GEMMs: the
  // weight decoded into a bf16 scratch matrix (DequantToBf16), the
  // activations rounded to bf16, GemmBf16 (cuBLAS in the CUDA build) with f32
  // accumulation. Faster on a GPU, but the arithmetic then depends on the
  // step's size: a prefix prefilled and the same prefix decoded give other
  // K/V. 0 (the default): every product in MatMul, the same bits for any
  // batch shape. The router always runs MatMul, the expert stacks
  // GroupedMatMul.
  int64_t gemm_min_tokens = 0;
  // With gemm_min_tokens (--device-prefill fp8): in those steps the products
  // of FP8 weights take FP8 activations (E4M3 per token and 1x128 group, or per
  // token for per-channel weights) through GemmFp8, cuBLASLt's FP8 tensor cores
  // where the device has them (kernels/fp8_matmul.h), instead of the bf16 GEMM.
  bool fp8_gemm = false;
};

// The prefill size --device-prefill bf16 sets as DeviceOptions::gemm_min_tokens.
inline constexpr int64_t kBf16GemmMinTokens = 32;

}  // namespace pg::gpu
