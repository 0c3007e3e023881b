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

// One key's score: the order of dsa_indexer.h, one key at a time (the reference, and any host).
float KeyScoreScalar(const float* iq, const float* w, int64_t heads, int64_t dim, const float* key) {
  float sum = 0;
  for (int64_t h = 0; h < heads; ++h) sum += w[h] * std::max(DotLanes8Scalar(iq + h * dim, key, dim), 0.0f);
  return sum;
}

// kIndexerKeyGroup keys' scores at once, each key's operations those of KeyScoreScalar in its
// order: per head, 8 lane accumulators per key (one fma per 8 dims, as DotLanes8), reduced for
// all 8 keys together by two rounds of horizontal adds and one add of the halves, which form
// exactly ((l0+l1)+(l2+l3))+((l4+l5)+(l6+l7)) for each key; the tail dims fma'd on after;
// then max(0, .), times w[h], added to the key's sum. One query row load serves 8 keys, and
// no reduction goes through memory.
__attribute__((target("avx2,fma"))) void KeyScores8Fma(const float* iq, const float* w, int64_t heads, int64_t dim,
                                                       const float* keys, float* out) {
  const int64_t n8 = dim & ~int64_t{7};
  __m256 sum = _mm256_setzero_ps();
  for (int64_t h = 0; h < heads; ++h) {
    const float* q = iq + h * dim;
    __m256 acc[kIndexerKeyGroup];
    for (auto& v : acc) v = _mm256_setzero_ps();
    for (int64_t d = 0; d < n8; d += 8) {
      const __m256 qv = _mm256_loadu_ps(q + d);
      for (int k = 0; k < kIndexerKeyGroup; ++k)
        acc[k] = _mm256_fmadd_ps(qv, _mm256_loadu_ps(keys + k * dim + d), acc[k]);
    }
    const __m256 u0 = _mm256_hadd_ps(_mm256_hadd_ps(acc[0], acc[1]), _mm256_hadd_ps(acc[2], acc[3]));
    const __m256 u1 = _mm256_hadd_ps(_mm256_hadd_ps(acc[4], acc[5]), _mm256_hadd_ps(acc[6], acc[7]));
    __m256 dot = _mm256_add_ps(_mm256_permute2f128_ps(u0, u1, 0x20), _mm256_permute2f128_ps(u0, u1, 0x31));
    if (n8 < dim) {
      alignas(32) float s[kIndexerKeyGroup];
      _mm256_store_ps(s, dot);
      for (int k = 0; k < kIndexerKeyGroup; ++k)
        for (int64_t i = n8; i < dim; ++i) s[k] = __builtin_fmaf(q[i], keys[k * dim + i], s[k]);
      dot = _mm256_load_ps(s);
    }
    // std::max(dot, 0.0f) is (dot < 0) ? 0 : dot, as maxps(0, dot) is (0 > dot) ? 0 : dot.
    const __m256 relu = _mm256_max_ps(_mm256_setzero_ps(), dot);
    sum = _mm256_add_ps(sum, _mm256_mul_ps(_mm256_set1_ps(w[h]), relu));
  }
  _mm256_storeu_ps(out, sum);
}

void IndexerScores(const IndexerArgs& a, const float* iq, const float* w, int64_t n_keys, float* scores, float* key) {
  IndexerScoresRange(a, iq, w, 0, n_keys, scores, key);
}

void IndexerScoresRange(const IndexerArgs& a, const float* iq, const float* w, int64_t k0, int64_t k1, float* scores,
                        float* key) {
  const KvPages& kv = *a.kv;
  const int64_t P = kv.page_tokens();
  auto widen = [&](int64_t s, float* dst) {
    WidenRow(kv.IndexRow(a.block_table[s / P], a.index_slot, s % P), kv.dtype(), dst, a.dim);
  };
  int64_t s = k0;
  if (UseFma()) {
    for (; s + kIndexerKeyGroup <= k1; s += kIndexerKeyGroup) {
      for (int k = 0; k < kIndexerKeyGroup; ++k) widen(s + k, key + k * a.dim);
      KeyScores8Fma(iq, w, a.heads, a.dim, key, scores + s);
    }
  }
  for (; s < k1; ++s) {
    widen(s, key);
    scores[s] = KeyScoreScalar(iq, w, a.heads, a.dim, key);
  }
}

}  // namespace pg
