// Products with FP8 E4M3 weights on the device (DeviceMatrix of type
// WType::kFP8_E4M3: one byte per weight plus f32 scales, kernels/fp8.cuh).
//
//   Fp8MatMul          decode and small batches (MatMul calls it): one warp per
//                      output row, each 32-byte chunk decoded in-register to
//                      scale * E4M3 value; f32 activations, f32 sums. The
//                      reference is the CPU's MatMulPrecise on the packed
//                      FP8_E4M3 matrix (the same f32 weights).
//   Fp8GroupedMatMul   the expert stacks (GroupedMatMul calls it).
//   Fp8DequantToBf16   the bf16 GEMM prefill's operand (DequantToBf16 calls it).
//   QuantizeActivationsFp8  f32 activations to E4M3 bytes and f32 scales:
//                      per token and 1x128 group (DeepSeek-V3's activation
//                      recipe) for block-scaled weights, per token for kPerRow
//                      weights; scale = amax / 448, byte = E4M3(x / scale).
//   GemmFp8            prefill with FP8 activations (--device-prefill fp8):
//                      y = sum over k of (xq * xscale) * (wq * wscale), f32
//                      accumulation. The CUDA build calls cuBLASLt with E4M3 A
//                      and B where the device has FP8 tensor cores (compute
//                      capability >= 8.9) and cuBLASLt's heuristic accepts the
//                      scaling (weights BLK128x128_32F with activations
//                      VEC128_32F, or OUTER_VEC_32F for both); otherwise
//                      (older GPUs, HIP, the emulator, kBlock64 weights, shapes
//                      cuBLASLt refuses) Fp8GemmKernel, our tiled kernel,
//                      decodes both operands in-register and is what the
//                      emulated op tests check.
//
// All pointers are device memory. Thread-safety: as the stream.
#pragma once

#include <cstddef>
#include <cstdint>

#include "gpu/kernels/matmul.h"
#include "gpu/runtime/gpu_vendor.h"

namespace pg::gpu {

// A well-formed FP8 matrix: whole 32-byte chunks, scales present.
bool Fp8ShapeOk(const DeviceMatrix& w);

// y[t * ldy + r] = sum_c W[r, c] * x[t * ldx + c], t < n_tokens (MatMul's contract).
gpuError_t Fp8MatMul(const DeviceMatrix& w, const float* x, int64_t ldx, int64_t n_tokens, float* y, int64_t ldy,
                     gpuStream_t s);

// GroupedMatMul's contract for an FP8 stack.
gpuError_t Fp8GroupedMatMul(const DeviceMatrix& stack, int32_t n_expert, const int32_t* offsets, const float* xg,
                            int64_t max_rows, float* yg, gpuStream_t s);

// out (rows, cols) bf16 = W decoded and rounded to nearest even bf16.
gpuError_t Fp8DequantToBf16(const DeviceMatrix& w, uint16_t* out, gpuStream_t s);

// The activation group GemmFp8 quantizes x by for weights w: 128, or w.cols (per token).
int64_t Fp8ActivationGroup(const DeviceMatrix& w);
// Tokens padded to a multiple of 4 (the scale tensors' outer dimension).
inline int64_t Fp8PaddedTokens(int64_t n) { return (n + 3) / 4 * 4; }

// x (n, k) f32 -> x8 (Fp8PaddedTokens(n), k) E4M3 bytes and xs[g * n_pad + t]
// (ceil(k / group) groups of every padded token) f32 scales; the padding
// tokens get zero bytes and scales.
gpuError_t QuantizeActivationsFp8(const float* x, int64_t n, int64_t k, int64_t group, uint8_t* x8, float* xs,
                                  gpuStream_t s);

// Device scratch GemmFp8 needs for n tokens of an m x k matrix.
size_t Fp8GemmScratchBytes(int64_t n, int64_t k, int64_t m);

// y (n, w.rows) f32 = FP8(x) (n, w.cols) * W^T, x quantized by QuantizeActivationsFp8.
gpuError_t GemmFp8(const DeviceMatrix& w, const float* x, int64_t n, float* y, void* scratch, size_t scratch_bytes,
                   gpuStream_t s);

#if PG_HAVE_BLASLT
// GemmFp8's cuBLASLt call (fp8_blaslt.cu): d (n_pad, w.rows) from x8 / xs as
// QuantizeActivationsFp8 wrote them. `ran` false (and gpuSuccess): not offered
// for this device, scaling or shape; GemmFp8 then runs its own kernel.
gpuError_t BlasLtGemmFp8(const DeviceMatrix& w, const uint8_t* x8, const float* xs, int64_t n_pad, float* d,
                         gpuStream_t s, bool* ran);
#endif

// Whether the last GemmFp8 on this host thread ran through cuBLASLt (false in
// builds without it): for the executor's arithmetic line and the device check.
bool LastFp8GemmUsedBlasLt();

}  // namespace pg::gpu
