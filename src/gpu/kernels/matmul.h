// Matrix products on the device, y = x * W^T, with W in its GGUF form.
//
//   MatMul     decode and small batches: our own kernel for the six weight
//              types (F32, F16, BF16, Q8_0, Q4_K, Q6_K; FP8 E4M3 goes to
//              Fp8MatMul, kernels/fp8_matmul.h), each block decoded in the
//              kernel (dequant.cuh); f32 activations and accumulation. One warp
//              per output row, up to kMatMulTokens tokens per pass.
//   GemmBf16   prefill: W and x in bf16, f32 accumulation. The CUDA build calls
//              cuBLAS (cublasGemmEx, CUBLAS_COMPUTE_32F); the emulated and HIP
//              builds (Debian has no hipBLAS) run GemmBf16Kernel, our own tiled
//              kernel, which stands in for cuBLAS and is what the emulated op
//              tests check.
//   DequantToBf16 / RoundToBf16  make GemmBf16's operands from a GGUF matrix
//              and from f32 activations.
//
// CPU reference: MatMulPrecise (backend/cpu/matmul_precise.h), which also
// keeps x in f32 and decodes every block as DequantizeRow does.
// All pointers are device memory. Thread-safety: as the stream.
#pragma once

#include <cstdint>

#include "gpu/kernels/dequant.cuh"
#include "gpu/kernels/fp8.cuh"
#include "gpu/runtime/gpu_vendor.h"

namespace pg::gpu {

inline constexpr int kMatMulTokens = 8;

// A weight matrix on the device: `rows` output features of `cols` inputs,
// row r at data + r * row_bytes. Matrices of an expert stack are `n_mats`
// such matrices, matrix e at data + e * mat_bytes.
struct DeviceMatrix {
  WType type = WType::kF16;
  const void* data = nullptr;
  int64_t rows = 0;
  int64_t cols = 0;
  int64_t row_bytes = 0;
  int64_t mat_bytes = 0;  // stride between the matrices of a stack
  // kFP8_E4M3 only (kernels/fp8.cuh): the f32 scales, matrix e's at
  // scales + e * scale_mat, a row of them scale_ld long.
  const float* scales = nullptr;
  Fp8Layout scale_layout = Fp8Layout::kPerRow;
  int64_t scale_ld = 0;
  int64_t scale_mat = 0;
};

// y[t * ldy + r] = sum_c W[r, c] * x[t * ldx + c], t < n_tokens.
gpuError_t MatMul(const DeviceMatrix& w, const float* x, int64_t ldx, int64_t n_tokens, float* y, int64_t ldy,
                  gpuStream_t s);

// y (n, m) f32 = x (n, k) bf16 * w (m, k) bf16 ^T. Row-major, dense.
gpuError_t GemmBf16(const uint16_t* w, const uint16_t* x, float* y, int64_t m, int64_t n, int64_t k, gpuStream_t s);

// out (rows, cols) bf16 = W decoded and rounded to nearest even bf16.
gpuError_t DequantToBf16(const DeviceMatrix& w, uint16_t* out, gpuStream_t s);
// out[i] = bf16(x[i]).
gpuError_t RoundToBf16(const float* x, uint16_t* out, int64_t n, gpuStream_t s);

}  // namespace pg::gpu
