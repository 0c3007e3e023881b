// Scalar reference versions of the vector kernels (see vec_ops.h, fp16.h).
#include <cmath>

#include "backend/cpu/fp16.h"
#include "backend/cpu/kernel_impls.h"
#include "backend/cpu/rope_pairs.h"

namespace pg::scalar {

void F16ToF32Row(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = F16ToF32(src[i]);
}
void F32ToF16Row(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = F32ToF16(src[i]);
}
void BF16ToF32Row(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = BF16ToF32(src[i]);
}
void F32ToBF16Row(const float* src, uint16_t* dst, int64_t n) {
  for (int64_t i = 0; i < n; ++i) dst[i] = F32ToBF16(src[i]);
}

void RmsNorm(const float* x, const float* w, float* y, int64_t n, float eps) {
  double ss = 0;
  for (int64_t i = 0; i < n; ++i) ss += static_cast<double>(x[i]) * x[i];
  const float s = 1.0f / std::sqrt(static_cast<float>(ss / static_cast<double>(n)) + eps);
  for (int64_t i = 0; i < n; ++i) y[i] = x[i] * s * (w ? w[i] : 1.0f);
}

void SiluMul(const float* gate, const float* up, float* out, int64_t n) {
  for (int64_t i = 0; i < n; ++i) {
    const float g = gate[i];
    out[i] = g / (1.0f + std::exp(-g)) * up[i];
  }
}

void Softmax(float* x, int64_t n) {
  float mx = -INFINITY;
  for (int64_t i = 0; i < n; ++i) mx = std::fmax(mx, x[i]);
  double sum = 0;
  for (int64_t i = 0; i < n; ++i) {
    x[i] = std::exp(x[i] - mx);
    sum += x[i];
  }
  const float inv = static_cast<float>(1.0 / sum);
  for (int64_t i = 0; i < n; ++i) x[i] *= inv;
}

float DotF32(const float* a, const float* b, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(a[i]) * b[i];
  return static_cast<float>(s);
}
float DotF16(const uint16_t* a, const float* b, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(F16ToF32(a[i])) * b[i];
  return static_cast<float>(s);
}
float DotBF16(const uint16_t* a, const float* b, int64_t n) {
  double s = 0;
  for (int64_t i = 0; i < n; ++i) s += static_cast<double>(BF16ToF32(a[i])) * b[i];
  return static_cast<float>(s);
}

void AxpyF32(float a, const float* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * x[i];
}
void AxpyF16(float a, const uint16_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * F16ToF32(x[i]);
}
void AxpyBF16(float a, const uint16_t* x, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += a * BF16ToF32(x[i]);
}

void Add(float* y, const float* x, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] += x[i];
}
void Scale(float* x, float s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) x[i] *= s;
}

void RopeNorm(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, const float* cos, const float* sin) {
  for (int64_t h = 0; h < n_heads; ++h) RopeNormPairs(x + h * head_dim, 0, n_rot / 2, cos, sin);
}

void RopeNeox(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, const float* cos, const float* sin) {
  const int64_t half = n_rot / 2;
  for (int64_t h = 0; h < n_heads; ++h) RopeNeoxPairs(x + h * head_dim, half, 0, half, cos, sin);
}

}  // namespace pg::scalar
