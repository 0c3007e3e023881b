#include "backend/cpu/cpu_kernels.h"

#include "backend/cpu/kernel_impls.h"
#include "backend/cpu/matmul.h"

namespace pg {

WeightKind WeightKindOf(GgmlType type) {
  switch (type) {
    case GgmlType::F32: return WeightKind::kF32;
    case GgmlType::F16: return WeightKind::kF16;
    case GgmlType::BF16: return WeightKind::kBF16;
    case GgmlType::Q8_0: return WeightKind::kQ8_0;
    case GgmlType::Q4_0: return WeightKind::kQ4_0;
    case GgmlType::Q4_K: return WeightKind::kQ4_K;
    case GgmlType::Q5_K: return WeightKind::kQ5_K;
    case GgmlType::Q6_K: return WeightKind::kQ6_K;
    case GgmlType::Q4_1: return WeightKind::kQ4_1;
    case GgmlType::Q5_0: return WeightKind::kQ5_0;
    case GgmlType::Q5_1: return WeightKind::kQ5_1;
    case GgmlType::IQ4_NL: return WeightKind::kIQ4_NL;
    case GgmlType::MXFP4: return WeightKind::kMXFP4;
    case GgmlType::Q2_K: return WeightKind::kQ2_K;
    case GgmlType::Q3_K: return WeightKind::kQ3_K;
    case GgmlType::IQ4_XS: return WeightKind::kIQ4_XS;
    case GgmlType::NVFP4: return WeightKind::kNVFP4;
    case GgmlType::FP8_E4M3: return WeightKind::kFP8_E4M3;
    default: return WeightKind::kCount;
  }
}

WeightKind WeightKindOf(const WeightMatrix& w) {
  switch (w.layout) {
    case WeightLayout::kRowMajor: return WeightKindOf(w.type);
    case WeightLayout::kQ8_0x8: return w.type == GgmlType::Q8_0 ? WeightKind::kQ8_0x8 : WeightKind::kCount;
    case WeightLayout::kQ4_Kx8: return w.type == GgmlType::Q4_K ? WeightKind::kQ4_Kx8 : WeightKind::kCount;
    case WeightLayout::kQ6_Kx8: return w.type == GgmlType::Q6_K ? WeightKind::kQ6_Kx8 : WeightKind::kCount;
    case WeightLayout::kQ5_0x8: return w.type == GgmlType::Q5_0 ? WeightKind::kQ5_0x8 : WeightKind::kCount;
    case WeightLayout::kQ5_Kx8: return w.type == GgmlType::Q5_K ? WeightKind::kQ5_Kx8 : WeightKind::kCount;
    case WeightLayout::kFP8x4: return w.type == GgmlType::FP8_E4M3 ? WeightKind::kFP8x4 : WeightKind::kCount;
    case WeightLayout::kHalf4:
      if (w.type == GgmlType::F16) return WeightKind::kF16Half4;
      return w.type == GgmlType::BF16 ? WeightKind::kBF16Half4 : WeightKind::kCount;
  }
  return WeightKind::kCount;
}

ActFormat ActFormatOf(WeightKind kind) {
  switch (kind) {
    case WeightKind::kQ8_0:
    case WeightKind::kQ8_0x8:
    case WeightKind::kQ5_0x8:
    case WeightKind::kQ4_0:
    case WeightKind::kQ4_1:
    case WeightKind::kQ5_0:
    case WeightKind::kQ5_1:
    case WeightKind::kIQ4_NL:
    case WeightKind::kMXFP4:
    case WeightKind::kNVFP4: return ActFormat::kQ8_0;
    case WeightKind::kQ4_K:
    case WeightKind::kQ5_K:
    case WeightKind::kQ6_K:
    case WeightKind::kQ4_Kx8:
    case WeightKind::kQ6_Kx8:
    case WeightKind::kQ5_Kx8:
    case WeightKind::kQ2_K:
    case WeightKind::kQ3_K:
    case WeightKind::kIQ4_XS: return ActFormat::kQ8_K;
    case WeightKind::kF16:
    case WeightKind::kF16Half4: return ActFormat::kF32AsF16;
    case WeightKind::kBF16:
    case WeightKind::kBF16Half4: return ActFormat::kF32AsBF16;
    default: return ActFormat::kF32;
  }
}

size_t ActRowBytes(ActFormat f, int64_t cols) {
  switch (f) {
    case ActFormat::kF32:
    case ActFormat::kF32AsF16:
    case ActFormat::kF32AsBF16: return static_cast<size_t>(cols) * sizeof(float);
    case ActFormat::kQ8_0: return static_cast<size_t>(cols / kQK) * sizeof(BlockQ8_0);
    case ActFormat::kQ8_K: return static_cast<size_t>(cols / kQKK) * sizeof(BlockQ8_K);
  }
  return 0;
}

#define PG_KERNEL_TABLE(ns, lvl)                                                                                       \
  CpuKernels {                                                                                                         \
    lvl, ns::F16ToF32Row, ns::F32ToF16Row, ns::BF16ToF32Row, ns::F32ToBF16Row, ns::RmsNorm, ns::SiluMul, ns::Softmax,  \
        ns::DotF32, ns::DotF16, ns::DotBF16, ns::AxpyF32, ns::AxpyF16, ns::AxpyBF16, ns::Add, ns::Scale, ns::RopeNorm, \
        ns::RopeNeox, ns::QuantizeQ8_0, ns::QuantizeQ8_K, {                                                            \
      ns::GemmF32, ns::GemmF16, ns::GemmBF16, ns::GemmQ8_0, ns::GemmQ4_0, ns::GemmQ4_K, ns::GemmQ5_K, ns::GemmQ6_K,    \
          ns::GemmQ4_1, ns::GemmQ5_0, ns::GemmQ5_1, ns::GemmIQ4_NL, ns::GemmMXFP4, ns::GemmQ2_K, ns::GemmQ3_K,         \
          ns::GemmIQ4_XS, ns::GemmQ8_0x8, ns::GemmF16Half4, ns::GemmBF16Half4, ns::GemmQ4_Kx8, ns::GemmQ6_Kx8,         \
          scalar::GemmQ5_0x8, ns::GemmQ5_Kx8, ns::GemmNVFP4, ns::GemmFP8_E4M3, scalar::GemmFP8x4                       \
    }                                                                                                                  \
  }

const CpuKernels& ScalarKernels() {
  static const CpuKernels k = PG_KERNEL_TABLE(scalar, IsaLevel::kScalar);
  return k;
}

const CpuKernels& Avx2Kernels() {
  static const CpuKernels k = [] {
    CpuKernels t = PG_KERNEL_TABLE(avx2, IsaLevel::kAvx2);
    t.half4_f16 = t.half4_bf16 = true;
    t.k_quant_x8 = true;
    t.gemm[static_cast<int>(WeightKind::kQ5_0x8)] = avx2::GemmQ5_0x8;
    t.q5_0x8 = true;
    t.gemm[static_cast<int>(WeightKind::kFP8x4)] = avx2::GemmFP8x4;
    t.fp8x4 = true;
    return t;
  }();
  return k;
}

// The AVX-512 table starts from the AVX2 one: every weight kind without an
// AVX-512 kernel below (the row-major K-quants, Q4_1, Q5_0, Q5_1, IQ4_NL,
// MXFP4, Q2_K, Q3_K, IQ4_XS, Half4) runs its AVX2 kernel.
const CpuKernels& Avx512Kernels() {
  static const CpuKernels k = [] {
    CpuKernels t = Avx2Kernels();
    t.level = IsaLevel::kAvx512;
    t.quantize_q8_0 = avx512::QuantizeQ8_0;
    t.quantize_q8_k = avx512::QuantizeQ8_K;
    t.dot_f32 = avx512::DotF32;
    t.dot_f16 = avx512::DotF16;
    t.axpy_f16 = avx512::AxpyF16;
    t.silu_mul = avx512::SiluMul;
    t.gemm[static_cast<int>(WeightKind::kQ8_0)] = avx512::GemmQ8_0;
    t.gemm[static_cast<int>(WeightKind::kQ4_0)] = avx512::GemmQ4_0;
    t.gemm[static_cast<int>(WeightKind::kF16)] = avx512::GemmF16;
    t.gemm[static_cast<int>(WeightKind::kQ8_0x8)] = avx512::GemmQ8_0x8;
    t.gemm[static_cast<int>(WeightKind::kQ4_Kx8)] = avx512::GemmQ4_Kx8;
    t.gemm[static_cast<int>(WeightKind::kQ6_Kx8)] = avx512::GemmQ6_Kx8;
    t.gemm[static_cast<int>(WeightKind::kQ5_0x8)] = avx512::GemmQ5_0x8;
    t.gemm[static_cast<int>(WeightKind::kQ5_Kx8)] = avx512::GemmQ5_Kx8;
    t.gemm[static_cast<int>(WeightKind::kNVFP4)] = avx512::GemmNVFP4;
    t.gemm[static_cast<int>(WeightKind::kFP8_E4M3)] = avx512::GemmFP8_E4M3;
    t.gemm[static_cast<int>(WeightKind::kFP8x4)] = avx512::GemmFP8x4;
    t.fp8x4 = true;
    t.q5_0x8 = true;
    t.half4_f16 = false;  // BF16 still runs the AVX2 kernels
    return t;
  }();
  return k;
}

const CpuKernels* KernelsFor(IsaLevel level) {
  if (!HostSupports(level)) return nullptr;
  switch (level) {
    case IsaLevel::kScalar: return &ScalarKernels();
    case IsaLevel::kAvx2: return &Avx2Kernels();
    case IsaLevel::kAvx512: return &Avx512Kernels();
  }
  return nullptr;
}

const CpuKernels& ActiveKernels() {
  static const CpuKernels* k = KernelsFor(ActiveIsa());
  return *k;
}

}  // namespace pg
