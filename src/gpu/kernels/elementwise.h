// Row-wise kernels of the forward pass on the device: embedding rows, RMSNorm
// fused with the residual add (and the per-head q/k norm), biases, SiLU*mul,
// RoPE. All pointers are device memory; every launcher enqueues on `s` and
// returns the launch's error (gpuSuccess, or gpuErrorInvalidValue for a
// shape it does not take). CPU references: backend/cpu/vec_ops.h, rope.h,
// quant.h (DequantizeRow). Thread-safety: as the stream.
#pragma once

#include <cstdint>

#include "gpu/kernels/dequant.cuh"
#include "gpu/runtime/gpu_vendor.h"

namespace pg::gpu {

// out[i, :] (n, cols) f32 = row ids[i] of `table` (rows of `type`, row r at
// table + r * row_bytes). cols: a multiple of 32 (of 256 for Q4_K / Q6_K).
gpuError_t GetRows(WType type, const void* table, int64_t row_bytes, int64_t cols, const int32_t* ids, int64_t n,
                   float* out, gpuStream_t s);

// For each of `rows` rows of n floats:
//   residual != null: h = residual + x; residual = h   (the residual stream)
//   residual == null: h = x
//   y = h / sqrt(mean(h^2) + eps) * w                   (w null: no weight)
// y may equal x. The q/k norm is this with rows = tokens * heads, n = head_dim.
gpuError_t RmsNormResidual(const float* x, float* residual, const float* w, float* y, int64_t rows, int64_t n,
                           float eps, gpuStream_t s);

// x[r, :] += bias[:] for r < rows (n columns).
gpuError_t AddBias(float* x, const float* bias, int64_t rows, int64_t n, gpuStream_t s);

// out[i] = silu(gate[i]) * up[i], silu(g) = g / (1 + exp(-g)); out may alias either.
gpuError_t SiluMul(const float* gate, const float* up, float* out, int64_t n, gpuStream_t s);

// Rotates x (n_tokens, n_heads, head_dim) in place: token t at position
// pos[t]; pairs i < n_rot / 2 at angle pos * inv_freq[i] (in double, as
// RopeCosSin); NORM pairs (2i, 2i+1), NEOX pairs (i, i + n_rot/2); elements
// past n_rot unchanged (partial rotary).
gpuError_t Rope(float* x, int64_t n_tokens, int64_t n_heads, int64_t head_dim, int64_t n_rot, const int32_t* pos,
                const float* inv_freq, bool neox, gpuStream_t s);

}  // namespace pg::gpu
