#include "synth/weight_generator.h"

#include "synth/splitmix64.h"

namespace pg {

void GenerateWeights(uint64_t key, int64_t first, int64_t n, float mean, float std, float* out) {
  // Sum of four U(0,1) has mean 2 and variance 1/3.
  constexpr float kLane = 1.0f / 65536.0f;
  constexpr float kUnit = 1.7320508075688772f;  // sqrt(3)
  for (int64_t j = 0; j < n; ++j) {
    const uint64_t u = Mix64(key + static_cast<uint64_t>(first + j));
    const float s = static_cast<float>((u & 0xFFFF) + ((u >> 16) & 0xFFFF) + ((u >> 32) & 0xFFFF) + (u >> 48));
    const float z = (s * kLane - 2.0f) * kUnit;
    out[j] = mean + std * z;
  }
}

}  // namespace pg
