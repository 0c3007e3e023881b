#include "backend/cpu/rope.h"

#include <cmath>

#include "backend/cpu/cpu_kernels.h"

namespace pg {

void RopeInvFreq(int64_t n_rot, float freq_base, const RopeScaling& s, const float* freq_factors, float* inv_freq) {
  const double kTwoPi = 6.283185307179586;
  for (int64_t i = 0; i < n_rot / 2; ++i) {
    double f = std::pow(static_cast<double>(freq_base), -2.0 * static_cast<double>(i) / n_rot);
    if (freq_factors != nullptr) {
      f /= freq_factors[i];
    } else if (s.kind == RopeScaling::Kind::kLlama3) {
      const double wavelen = kTwoPi / f;
      const double low_wavelen = s.original_context / s.low_freq_factor;
      const double high_wavelen = s.original_context / s.high_freq_factor;
      if (wavelen > low_wavelen) {
        f /= s.factor;
      } else if (wavelen >= high_wavelen) {
        const double smooth =
            (s.original_context / wavelen - s.low_freq_factor) / (s.high_freq_factor - s.low_freq_factor);
        f *= (1.0 - smooth) / s.factor + smooth;
      }
    }
    if (s.kind == RopeScaling::Kind::kLinear) f /= s.factor;
    inv_freq[i] = static_cast<float>(f);
  }
}

void RopeCosSin(const float* inv_freq, int64_t n_rot, int64_t pos, float* cos_out, float* sin_out) {
  for (int64_t i = 0; i < n_rot / 2; ++i) {
    const double a = static_cast<double>(pos) * inv_freq[i];
    cos_out[i] = static_cast<float>(std::cos(a));
    sin_out[i] = static_cast<float>(std::sin(a));
  }
}

void RopeNorm(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, const float* cos, const float* sin) {
  ActiveKernels().rope_norm(x, n_heads, head_dim, n_rot, cos, sin);
}
void RopeNeox(float* x, int64_t n_heads, int64_t head_dim, int64_t n_rot, const float* cos, const float* sin) {
  ActiveKernels().rope_neox(x, n_heads, head_dim, n_rot, cos, sin);
}

}  // namespace pg
