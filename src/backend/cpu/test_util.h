// Private test helpers for the CPU backend tests.
#pragma once

#include <random>
#include <vector>

#include "backend/cpu/cpu_kernels.h"

namespace pg::testing {

// Every kernel table the host can run, scalar first.
inline std::vector<const CpuKernels*> HostKernelTables() {
  std::vector<const CpuKernels*> out;
  for (IsaLevel l : {IsaLevel::kScalar, IsaLevel::kAvx2, IsaLevel::kAvx512}) {
    if (const CpuKernels* k = KernelsFor(l)) out.push_back(k);
  }
  return out;
}

inline std::vector<float> RandomFloats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// Gaussian values with a few outliers, like real weights / activations.
inline std::vector<float> RandomWeights(size_t n, uint32_t seed, float sigma = 0.05f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, sigma);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = dist(rng) * ((i % 97) == 0 ? 8.0f : 1.0f);
  return v;
}

}  // namespace pg::testing
