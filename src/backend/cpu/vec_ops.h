// Small vector kernels of the forward pass (norms, activations, softmax,
// attention dot/axpy on f16/bf16 KV, residual adds). Each dispatches to the
// active ISA through the CpuKernels table; the scalar versions are the
// reference the SIMD ones are tested against.
//
// All sizes are element counts; any n >= 0 works (no alignment or multiple
// requirements). In-place use is allowed where a function says so.
//
// Thread-safety: pure functions on caller-owned memory.
#pragma once

#include <cstdint>

#include "backend/cpu/fp16.h"
#include "backend/cpu/rope.h"

namespace pg {

// y[i] = x[i] / sqrt(mean(x^2) + eps) * w[i]. w may be null (no weight).
// y may equal x.
void RmsNorm(const float* x, const float* w, float* y, int64_t n, float eps);

// out[i] = silu(gate[i]) * up[i], silu(g) = g / (1 + exp(-g)). out may alias either input.
void SiluMul(const float* gate, const float* up, float* out, int64_t n);

// x = softmax(x), numerically stable (subtracts the max). n >= 1.
void SoftmaxInPlace(float* x, int64_t n);

float DotF32(const float* a, const float* b, int64_t n);
float DotF16(const uint16_t* a, const float* b, int64_t n);   // a in f16
float DotBF16(const uint16_t* a, const float* b, int64_t n);  // a in bf16

// y[i] += a * x[i]
void AxpyF32(float a, const float* x, float* y, int64_t n);
void AxpyF16(float a, const uint16_t* x, float* y, int64_t n);
void AxpyBF16(float a, const uint16_t* x, float* y, int64_t n);

// y[i] += x[i]
void AddInPlace(float* y, const float* x, int64_t n);
// x[i] *= s
void Scale(float* x, float s, int64_t n);

// Row stores for K/V cache pages (round to nearest even).
inline void StoreRowF16(const float* src, uint16_t* dst, int64_t n) { F32ToF16Row(src, dst, n); }
inline void StoreRowBF16(const float* src, uint16_t* dst, int64_t n) { F32ToBF16Row(src, dst, n); }

}  // namespace pg
