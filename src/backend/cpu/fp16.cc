#include "backend/cpu/fp16.h"

#include "backend/cpu/cpu_kernels.h"

namespace pg {

void F16ToF32Row(const uint16_t* src, float* dst, int64_t n) { ActiveKernels().f16_to_f32(src, dst, n); }
void F32ToF16Row(const float* src, uint16_t* dst, int64_t n) { ActiveKernels().f32_to_f16(src, dst, n); }
void BF16ToF32Row(const uint16_t* src, float* dst, int64_t n) { ActiveKernels().bf16_to_f32(src, dst, n); }
void F32ToBF16Row(const float* src, uint16_t* dst, int64_t n) { ActiveKernels().f32_to_bf16(src, dst, n); }

}  // namespace pg
