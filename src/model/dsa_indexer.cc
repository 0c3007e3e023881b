#include "model/dsa_indexer.h"

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cpu/cpu_features.h"
#include "backend/cpu/fp16.h"

namespace pg {

float DotLanes8Scalar(const float* a, const float* b, int64_t n) {
  float l[8] = {};
  const int64_t n8 = n & ~int64_t{7};
  for (int64_t i = 0; i < n8; i += 8)
    for (int j = 0; j < 8; ++j) l[j] = std::fma(a[i + j], b[i + j], l[j]);
  float s = ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
  for (int64_t i = n8; i < n; ++i) s = std::fma(a[i], b[i], s);
  return s;
}

void FmaRowScalar(float w, const float* row, float* o, int64_t n) {
  for (int64_t d = 0; d < n; ++d) o[d] = std::fma(w, row[d], o[d]);
}

// The same operations as the scalar versions, lane for lane: a fused multiply-add is correctly rounded
// wherever it runs, so these give the scalar reference's bits (DsaIndexer.*MatchScalar tests).
__attribute__((target("avx2,fma"))) float DotLanes8Fma(const float* a, const float* b, int64_t n) {
  __m256 acc = _mm256_setzero_ps();
  const int64_t n8 = n & ~int64_t{7};
  for (int64_t i = 0; i < n8; i += 8) acc = _mm256_fmadd_ps(_mm256_loadu_ps(a + i), _mm256_loadu_ps(b + i), acc);
  alignas(32) float l[8];
  _mm256_store_ps(l, acc);
  float s = ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7]));
  for (int64_t i = n8; i < n; ++i) s = __builtin_fmaf(a[i], b[i], s);
  return s;
}

__attribute__((target("avx2,fma"))) void FmaRowFma(float w, const float* row, float* o, int64_t n) {
  const __m256 vw = _mm256_set1_ps(w);
  const int64_t n8 = n & ~int64_t{7};
  for (int64_t d = 0; d < n8; d += 8)
    _mm256_storeu_ps(o + d, _mm256_fmadd_ps(vw, _mm256_loadu_ps(row + d), _mm256_loadu_ps(o + d)));
  for (int64_t d = n8; d < n; ++d) o[d] = __builtin_fmaf(w, row[d], o[d]);
}

bool UseFma() {
  static const bool fma = ActiveIsa() >= IsaLevel::kAvx2;
  return fma;
}

float DotLanes8(const float* a, const float* b, int64_t n) {
  return UseFma() ? DotLanes8Fma(a, b, n) : DotLanes8Scalar(a, b, n);
}

void FmaRow(float w, const float* row, float* o, int64_t n) {
  if (UseFma())
    FmaRowFma(w, row, o, n);
  else
    FmaRowScalar(w, row, o, n);
}

void WidenRow(const uint16_t* src, KvDtype dtype, float* dst, int64_t n) {
  if (dtype == KvDtype::kF32)
    std::memcpy(dst, src, static_cast<size_t>(n) * sizeof(float));
  else if (dtype == KvDtype::kF16)
    F16ToF32Row(src, dst, n);
  else
    BF16ToF32Row(src, dst, n);
}

void IndexerScores(const IndexerArgs& a, const float* iq, const float* w, int64_t n_keys, float* scores, float* key) {
  const KvPages& kv = *a.kv;
  const int64_t P = kv.page_tokens();
  for (int64_t s = 0; s < n_keys; ++s) {
    WidenRow(kv.IndexRow(a.block_table[s / P], a.index_slot, s % P), kv.dtype(), key, a.dim);
    float sum = 0;
    for (int64_t h = 0; h < a.heads; ++h) sum += w[h] * std::max(DotLanes8(iq + h * a.dim, key, a.dim), 0.0f);
    scores[s] = sum;
  }
}

}  // namespace pg
