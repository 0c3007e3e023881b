// BenchRng: a small portable PRNG (SplitMix64 stream) with the few
// distributions the workloads use, so a --seed gives the same workload on
// every platform and standard library. Thread-safety: none (one per user).
#pragma once

#include <cmath>
#include <cstdint>

#include "bench/token_space.h"

namespace pg::bench {

class BenchRng {
 public:
  explicit BenchRng(uint64_t seed) : state_(Mix64(seed)) {}
  uint64_t Next() { return Mix64(state_++); }
  // Uniform in [0, 1).
  double Uniform() { return static_cast<double>(Next() >> 11) * (1.0 / 9007199254740992.0); }
  double Uniform(double a, double b) { return a + (b - a) * Uniform(); }
  // Standard normal (Box-Muller).
  double Normal() {
    double u1 = 1.0 - Uniform();  // (0, 1]
    double u2 = Uniform();
    return std::sqrt(-2.0 * std::log(u1)) * std::cos(6.283185307179586 * u2);
  }
  // Log-normal with the given median and log-space sigma.
  double LogNormal(double median, double sigma) { return median * std::exp(sigma * Normal()); }
  // Exponential with the given mean.
  double Exponential(double mean) { return -mean * std::log(1.0 - Uniform()); }

 private:
  uint64_t state_;
};

}  // namespace pg::bench
