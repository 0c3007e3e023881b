#include "model/attention.h"

#include <cmath>
#include <cstring>

#include "backend/cpu/cpu_features.h"
#include "backend/cpu/vec_ops.h"
#include "model/attention_step.h"

namespace pg {
namespace {

// dot of an f16 key row and an f16 query, in the fixed order described in the header.
float DotF16F16Ordered(const uint16_t* k, const uint16_t* q, int64_t n) {
  const int64_t np = n & ~int64_t{31};
  float sum[4][8] = {};
  for (int64_t i = 0; i < np; i += 32)
    for (int j = 0; j < 4; ++j)
      for (int l = 0; l < 8; ++l)
        sum[j][l] = std::fma(F16ToF32(k[i + j * 8 + l]), F16ToF32(q[i + j * 8 + l]), sum[j][l]);
  double total = 0;
  if (np > 0) {
    float s[8];
    for (int l = 0; l < 8; ++l) s[l] = (sum[0][l] + sum[2][l]) + (sum[1][l] + sum[3][l]);
    float t[4];
    for (int l = 0; l < 4; ++l) t[l] = s[l] + s[l + 4];
    total = (t[0] + t[1]) + (t[2] + t[3]);
  }
  for (int64_t i = np; i < n; ++i) total += static_cast<double>(F16ToF32(k[i]) * F16ToF32(q[i]));
  return static_cast<float>(total);
}

void AttendBf16(const AttentionArgs& a, const float* q, float* out, float* scores) {
  const int64_t HD = a.head_dim;
  for (int64_t j = 0; j < a.n_keys; ++j) scores[j] = DotBF16(HeadRow(a, j, 0), q, HD) * a.scale;
  SoftmaxInPlace(scores, a.n_keys);
  std::memset(out, 0, static_cast<size_t>(HD) * sizeof(float));
  for (int64_t j = 0; j < a.n_keys; ++j) AxpyBF16(scores[j], HeadRow(a, j, 1), out, HD);
}

}  // namespace

void AttendOneScalar(const AttentionArgs& a, const float* q, float* out, float* scratch) {
  const KvPages& kv = *a.kv;
  if (kv.dtype() != KvDtype::kF16) return AttendBf16(a, q, out, scratch);
  const int64_t HD = a.head_dim;
  uint16_t qh[512], acc[512];
  for (int64_t d = 0; d < HD; ++d) {
    qh[d] = F32ToF16(q[d]);
    acc[d] = 0;
  }
  OnlineSoftmax sm;
  for (int64_t j = 0; j < a.n_keys; ++j) {
    const uint16_t* v = HeadRow(a, j, 1);
    if (sm.Step(DotF16F16Ordered(HeadRow(a, j, 0), qh, HD) * a.scale)) {
      for (int64_t d = 0; d < HD; ++d) acc[d] = F32ToF16(F16ToF32(acc[d]) * sm.rescale);
    }
    for (int64_t d = 0; d < HD; ++d) acc[d] = F32ToF16(std::fma(F16ToF32(v[d]), sm.weight, F16ToF32(acc[d])));
  }
  const float inv = sm.InvSum();
  for (int64_t d = 0; d < HD; ++d) out[d] = F16ToF32(acc[d]) * inv;
}

void AttendOne(const AttentionArgs& a, const float* q, float* out, float* scratch) {
  static const bool avx2 = ActiveIsa() >= IsaLevel::kAvx2;
  if (avx2 && a.kv->dtype() == KvDtype::kF16 && a.head_dim % 8 == 0) return AttendOneAvx2(a, q, out, scratch);
  AttendOneScalar(a, q, out, scratch);
}

}  // namespace pg
