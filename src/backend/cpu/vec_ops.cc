#include "backend/cpu/vec_ops.h"

#include "backend/cpu/cpu_kernels.h"

namespace pg {

void RmsNorm(const float* x, const float* w, float* y, int64_t n, float eps) {
  ActiveKernels().rms_norm(x, w, y, n, eps);
}
void SiluMul(const float* gate, const float* up, float* out, int64_t n) { ActiveKernels().silu_mul(gate, up, out, n); }
void SoftmaxInPlace(float* x, int64_t n) { ActiveKernels().softmax(x, n); }
float DotF32(const float* a, const float* b, int64_t n) { return ActiveKernels().dot_f32(a, b, n); }
float DotF16(const uint16_t* a, const float* b, int64_t n) { return ActiveKernels().dot_f16(a, b, n); }
float DotBF16(const uint16_t* a, const float* b, int64_t n) { return ActiveKernels().dot_bf16(a, b, n); }
void AxpyF32(float a, const float* x, float* y, int64_t n) { ActiveKernels().axpy_f32(a, x, y, n); }
void AxpyF16(float a, const uint16_t* x, float* y, int64_t n) { ActiveKernels().axpy_f16(a, x, y, n); }
void AxpyBF16(float a, const uint16_t* x, float* y, int64_t n) { ActiveKernels().axpy_bf16(a, x, y, n); }
void AddInPlace(float* y, const float* x, int64_t n) { ActiveKernels().add(y, x, n); }
void Scale(float* x, float s, int64_t n) { ActiveKernels().scale(x, s, n); }

}  // namespace pg
