// CpuKernels: the CPU backend's table of function pointers, one table per
// ISA level (scalar, AVX2, AVX-512), chosen once at startup. The public
// entry points (vec_ops.h, fp16.h, matmul.h) call through ActiveKernels();
// tests call KernelsFor(level) to compare every level with the scalar one.
// A future CUDA backend provides the same operations behind its own table.
//
// Thread-safety: tables are immutable after static initialization.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backend/cpu/cpu_features.h"
#include "backend/cpu/quant.h"

namespace pg {

struct WeightMatrix;

// The weight types MatMul handles, as a dense index for the gemm[] table.
// kQ8_0x8 .. kQ5_Kx8 are repacked layouts (WeightLayout::kQ8_0x8, kHalf4, kQ4_Kx8, kQ6_Kx8, kQ5_0x8,
// kQ5_Kx8); kNVFP4 and kFP8_E4M3 are row-major again, kFP8x4 repacked (WeightLayout::kFP8x4).
enum class WeightKind {
  kF32,
  kF16,
  kBF16,
  kQ8_0,
  kQ4_0,
  kQ4_K,
  kQ5_K,
  kQ6_K,
  kQ4_1,
  kQ5_0,
  kQ5_1,
  kIQ4_NL,
  kMXFP4,
  kQ2_K,
  kQ3_K,
  kIQ4_XS,
  kQ8_0x8,
  kF16Half4,
  kBF16Half4,
  kQ4_Kx8,
  kQ6_Kx8,
  kQ5_0x8,
  kQ5_Kx8,
  kNVFP4,
  kFP8_E4M3,
  kFP8x4,
  kCount
};

// Index for `type` in the row-major layout, or kCount if unsupported.
WeightKind WeightKindOf(GgmlType type);
// Index for a matrix, given its type and layout, or kCount if unsupported.
WeightKind WeightKindOf(const WeightMatrix& w);

// How MatMul prepares activations for a weight type.
//
// F16 / BF16 weights see x rounded to f16 / bf16 (stored as f32), as in
// llama.cpp, whose vec_dot type for those weights is the weight type: the
// results then agree with llama.cpp's up to summation order.
enum class ActFormat {
  kF32,        // x as is
  kF32AsF16,   // float[cols] per token, each value rounded to the nearest f16
  kF32AsBF16,  // float[cols] per token, each value rounded to the nearest bf16
  kQ8_0,       // BlockQ8_0[cols / 32] per token (all 32-element weight blocks)
  kQ8_K,       // BlockQ8_K[cols / 256] per token (all 256-element weight blocks)
};
ActFormat ActFormatOf(WeightKind kind);
// Bytes of one token's prepared activations.
size_t ActRowBytes(ActFormat f, int64_t cols);

// Computes y[t * ldy + r] for r in [r0, r1), t in [t0, t1). Token t's
// prepared activations start at (const uint8_t*)xa + t * xa_stride.
using GemmTile = void(const WeightMatrix& w, const void* xa, size_t xa_stride, int64_t t0, int64_t t1, int64_t r0,
                      int64_t r1, float* y, int64_t ldy);
using GemmTileFn = GemmTile*;

struct CpuKernels {
  IsaLevel level;

  void (*f16_to_f32)(const uint16_t* src, float* dst, int64_t n);
  void (*f32_to_f16)(const float* src, uint16_t* dst, int64_t n);
  void (*bf16_to_f32)(const uint16_t* src, float* dst, int64_t n);
  void (*f32_to_bf16)(const float* src, uint16_t* dst, int64_t n);

  void (*rms_norm)(const float* x, const float* w, float* y, int64_t n, float eps);
  void (*silu_mul)(const float* gate, const float* up, float* out, int64_t n);
  void (*softmax)(float* x, int64_t n);
  float (*dot_f32)(const float* a, const float* b, int64_t n);
  float (*dot_f16)(const uint16_t* a, const float* b, int64_t n);
  float (*dot_bf16)(const uint16_t* a, const float* b, int64_t n);
  void (*axpy_f32)(float a, const float* x, float* y, int64_t n);
  void (*axpy_f16)(float a, const uint16_t* x, float* y, int64_t n);
  void (*axpy_bf16)(float a, const uint16_t* x, float* y, int64_t n);
  void (*add)(float* y, const float* x, int64_t n);
  void (*scale)(float* x, float s, int64_t n);
  void (*rope_norm)(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, const float* cos, const float* sin);
  void (*rope_neox)(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, const float* cos, const float* sin);

  void (*quantize_q8_0)(const float* src, BlockQ8_0* dst, int64_t n);
  void (*quantize_q8_k)(const float* src, BlockQ8_K* dst, int64_t n);

  GemmTileFn gemm[static_cast<int>(WeightKind::kCount)];
  // Whether models repack F16 / BF16 matrices into Half4 (repack.h) for this
  // table: true where its row-major kernel is the AVX2 one (Half4 reads the
  // same FMA chains as one stream). The AVX-512 F16 kernel is faster on its
  // own row-major layout (measured on a Sapphire Rapids host, docs/performance.md).
  bool half4_f16 = false;
  bool half4_bf16 = false;
  // Whether models repack Q4_K / Q5_K / Q6_K matrices into Q4_Kx8 / Q5_Kx8 / Q6_Kx8 (repack.h)
  // for this table: true where SIMD kernels for them exist (AVX2, and AVX-512
  // through it).
  bool k_quant_x8 = false;
  // Whether models repack Q5_0 matrices into Q5_0x8 (repack.h) rather than
  // into Q8_0x8: true where the table's Q5_0x8 kernel is a SIMD one (AVX2 and
  // AVX-512). Q5_0x8 reads 35% fewer bytes.
  bool q5_0x8 = false;
  // Whether models repack FP8_E4M3 matrices into FP8x4 (repack.h): true where
  // the table's FP8x4 kernel is a SIMD one (AVX2, and AVX-512).
  bool fp8x4 = false;
};

// The table for `level`, or nullptr if the host cannot run it.
const CpuKernels* KernelsFor(IsaLevel level);

// The table for ActiveIsa(), resolved once.
const CpuKernels& ActiveKernels();

// Per-level tables, defined in cpu_kernels_{scalar,avx2,avx512}.cc.
const CpuKernels& ScalarKernels();
const CpuKernels& Avx2Kernels();
const CpuKernels& Avx512Kernels();

}  // namespace pg
