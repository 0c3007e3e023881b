// Private: the per-ISA kernel functions that cpu_kernels.cc assembles into
// CpuKernels tables. Each namespace's functions live in files compiled with
// that ISA's flags (scalar: *_scalar.cc, avx2: *_avx2.cc, avx512: *_avx512.cc)
// and must only be called on a host that supports it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/matmul.h"
#include "backend/cpu/quant.h"

namespace pg {

// The kernels every full table has (GemmTile: the GEMM entries' type).
#define PG_DECLARE_KERNELS                                                                                       \
  void F16ToF32Row(const uint16_t* src, float* dst, int64_t n);                                                  \
  void F32ToF16Row(const float* src, uint16_t* dst, int64_t n);                                                  \
  void BF16ToF32Row(const uint16_t* src, float* dst, int64_t n);                                                 \
  void F32ToBF16Row(const float* src, uint16_t* dst, int64_t n);                                                 \
  void RmsNorm(const float* x, const float* w, float* y, int64_t n, float eps);                                  \
  void SiluMul(const float* gate, const float* up, float* out, int64_t n);                                       \
  void Softmax(float* x, int64_t n);                                                                             \
  float DotF32(const float* a, const float* b, int64_t n);                                                       \
  float DotF16(const uint16_t* a, const float* b, int64_t n);                                                    \
  float DotBF16(const uint16_t* a, const float* b, int64_t n);                                                   \
  void AxpyF32(float a, const float* x, float* y, int64_t n);                                                    \
  void AxpyF16(float a, const uint16_t* x, float* y, int64_t n);                                                 \
  void AxpyBF16(float a, const uint16_t* x, float* y, int64_t n);                                                \
  void Add(float* y, const float* x, int64_t n);                                                                 \
  void Scale(float* x, float s, int64_t n);                                                                      \
  void RopeNorm(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, const float* cos, const float* sin); \
  void RopeNeox(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, const float* cos, const float* sin); \
  void QuantizeQ8_0(const float* src, BlockQ8_0* dst, int64_t n);                                                \
  void QuantizeQ8_K(const float* src, BlockQ8_K* dst, int64_t n);                                                \
  GemmTile GemmF32, GemmF16, GemmBF16, GemmQ8_0, GemmQ4_0, GemmQ4_K, GemmQ5_K, GemmQ6_K;                         \
  GemmTile GemmQ4_1, GemmQ5_0, GemmQ5_1, GemmIQ4_NL, GemmMXFP4, GemmQ2_K, GemmQ3_K;                              \
  GemmTile GemmIQ4_XS, GemmQ8_0x8, GemmF16Half4, GemmBF16Half4, GemmQ4_Kx8, GemmQ6_Kx8;                          \
  GemmTile GemmNVFP4, GemmFP8_E4M3;

namespace scalar {
PG_DECLARE_KERNELS
// Block dot products (weights row vs prepared activations), nb blocks.
float DotQ8_0(const BlockQ8_0* w, const BlockQ8_0* x, int64_t nb);
float DotQ4_0(const BlockQ4_0* w, const BlockQ8_0* x, int64_t nb);
float DotQ4_K(const BlockQ4_K* w, const BlockQ8_K* x, int64_t nb);
float DotQ5_K(const BlockQ5_K* w, const BlockQ8_K* x, int64_t nb);
float DotQ6_K(const BlockQ6_K* w, const BlockQ8_K* x, int64_t nb);
float DotQ4_1(const BlockQ4_1* w, const BlockQ8_0* x, int64_t nb);
float DotQ5_0(const BlockQ5_0* w, const BlockQ8_0* x, int64_t nb);
float DotQ5_1(const BlockQ5_1* w, const BlockQ8_0* x, int64_t nb);
float DotIQ4_NL(const BlockIQ4_NL* w, const BlockQ8_0* x, int64_t nb);
float DotMXFP4(const BlockMXFP4* w, const BlockQ8_0* x, int64_t nb);
float DotQ2_K(const BlockQ2_K* w, const BlockQ8_K* x, int64_t nb);
float DotQ3_K(const BlockQ3_K* w, const BlockQ8_K* x, int64_t nb);
float DotIQ4_XS(const BlockIQ4_XS* w, const BlockQ8_K* x, int64_t nb);
// NVFP4 against Q8_0 activations (two Q8_0 blocks per NVFP4 block);
// FP8_E4M3 against f32 activations (gemm_fp_scalar.cc).
float DotNVFP4(const BlockNVFP4* w, const BlockQ8_0* x, int64_t nb);
float DotFP8_E4M3(const BlockFP8_E4M3* w, const float* x, int64_t nb);
// Q5_0x8 (repack.h): the reference.
GemmTile GemmQ5_0x8;
// Q5_Kx8 (repack.h): the reference, beside GemmQ4_Kx8 (gemm_scalar.cc).
GemmTile GemmQ5_Kx8;
// FP8x4 (repack.h): the reference, DotFP8_E4M3 over each row (gemm_fp_scalar.cc).
GemmTile GemmFP8x4;
}  // namespace scalar

namespace avx2 {
PG_DECLARE_KERNELS
GemmTile GemmQ5_Kx8;  // gemm_k_x8_avx2.cc
GemmTile GemmQ5_0x8;  // gemm_q8_0x8_avx2.cc
GemmTile GemmFP8x4;   // gemm_fp_avx2.cc
}  // namespace avx2

namespace avx512 {
// AVX-512 provides the hot kernels; the table falls back to avx2 for the rest.
GemmTile GemmQ8_0, GemmQ4_0, GemmF16;
void QuantizeQ8_0(const float* src, BlockQ8_0* dst, int64_t n);
void QuantizeQ8_K(const float* src, BlockQ8_K* dst, int64_t n);
float DotF32(const float* a, const float* b, int64_t n);
float DotF16(const uint16_t* a, const float* b, int64_t n);
void AxpyF16(float a, const uint16_t* x, float* y, int64_t n);
void SiluMul(const float* gate, const float* up, float* out, int64_t n);  // vec_ops_avx512.cc
// VNNI kernels over the 8-row repacked layouts (gemm_x8_avx512.cc).
GemmTile GemmQ8_0x8, GemmQ4_Kx8, GemmQ5_Kx8, GemmQ6_Kx8, GemmQ5_0x8;
GemmTile GemmNVFP4, GemmFP8_E4M3, GemmFP8x4;  // gemm_fp_avx512.cc
}  // namespace avx512

#undef PG_DECLARE_KERNELS

}  // namespace pg

// Defines the GemmTileFn NAME (a kernel-table entry, declared above) as a
// call of IMPL with GemmTileFn's arguments and then EXTRA...; parenthesize an
// IMPL whose template arguments hold commas.
#define PG_GEMM_AS(NAME, IMPL, ...)                                                                           \
  void NAME(const WeightMatrix& w, const void* xa, size_t xs, int64_t t0, int64_t t1, int64_t r0, int64_t r1, \
            float* y, int64_t ldy) {                                                                          \
    IMPL(w, xa, xs, t0, t1, r0, r1, y, ldy __VA_OPT__(, ) __VA_ARGS__);                                       \
  }
