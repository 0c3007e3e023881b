// Group-limited expert routing (DeepSeek-V2/V3, GLM): the n_expert experts
// form n_group equal groups, and a token picks its experts only among the
// n_group_used groups whose two largest scores (probs + bias) sum highest.
// One definition for the CPU router and the device one (gpu/kernels/moe.cu),
// so the two keep the same groups; host and device code alike.
#pragma once

#include <cmath>
#include <cstdint>

#if defined(__CUDACC__) || defined(__HIPCC__)
#define PG_EXPERT_GROUPS_FN __host__ __device__ inline
#else
#define PG_EXPERT_GROUPS_FN inline
#endif

namespace pg {

inline constexpr int kMaxRouterGroups = 256;  // n_group's bound

// keep[g] (n_group entries) = whether group g is among the n_group_used
// groups whose two largest scores sum highest (ties to the lower group); a
// group of one expert scores its one. bias (n_expert) or null.
PG_EXPERT_GROUPS_FN void KeepExpertGroups(int64_t n_expert, int64_t n_group, int64_t n_group_used, const float* probs,
                                          const float* bias, bool* keep) {
  const int64_t size = n_expert / n_group;
  float gscore[kMaxRouterGroups];
  for (int64_t g = 0; g < n_group; ++g) {
    float a = -INFINITY, b = -INFINITY;  // largest, second
    for (int64_t e = g * size; e < (g + 1) * size; ++e) {
      const float s = bias ? probs[e] + bias[e] : probs[e];
      if (s > a) {
        b = a;
        a = s;
      } else if (s > b) {
        b = s;
      }
    }
    gscore[g] = size >= 2 ? a + b : a;
    keep[g] = false;
  }
  for (int64_t n = 0; n < n_group_used; ++n) {
    int64_t best = -1;
    for (int64_t g = 0; g < n_group; ++g)
      if (!keep[g] && (best < 0 || gscore[g] > gscore[best])) best = g;
    keep[best] = true;
  }
}

}  // namespace pg
