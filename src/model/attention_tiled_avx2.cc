// AVX2 + F16C + FMA version of AttendGroupScalar: each K/V tile is converted
// to f32 once and shared by every query of the group; per query, the same
// operations in the same order as the scalar reference, so results are
// bit-identical to computing that query alone.
//
// scratch layout (floats):
//   kt[kAttentionTileKeys][head_dim]   K tile in f32 (rows past the last key: 0)
//   vt[kAttentionTileKeys][head_dim]   V tile in f32
//   acc[n_queries][head_dim]           running weighted sums of V
//   q[n_queries][head_dim]             the queries rounded to f16, in f32
//   m[n_queries], s[n_queries]         running max and sum of weights
#include <immintrin.h>

#include <algorithm>
#include <cmath>

#include "model/attention.h"
#include "model/attention_exp.h"
#include "model/kv_prefetch.h"

namespace pg {
namespace {

constexpr int64_t kT = kAttentionTileKeys;
static_assert(kT % 8 == 0);

inline void ConvertRow(const uint16_t* src, float* dst, int64_t n) {
  for (int64_t d = 0; d < n; d += 8)
    _mm256_storeu_ps(dst + d, _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + d))));
}

// Scores of q against 8 consecutive f32 key rows k8[8][n]: lane l of each
// key's 8-lane accumulator sums d = l mod 8; the transpose by hadd gives key
// i the reduction ((l0+l1)+(l2+l3)) + ((l4+l5)+(l6+l7)), as in the scalar dot.
inline __m256 Dot8Keys(const float* q, const float* k8, int64_t n) {
  __m256 c0 = _mm256_setzero_ps(), c1 = c0, c2 = c0, c3 = c0, c4 = c0, c5 = c0, c6 = c0, c7 = c0;
  for (int64_t d = 0; d < n; d += 8) {
    const __m256 qv = _mm256_loadu_ps(q + d);
    c0 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k8 + 0 * n + d), c0);
    c1 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k8 + 1 * n + d), c1);
    c2 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k8 + 2 * n + d), c2);
    c3 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k8 + 3 * n + d), c3);
    c4 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k8 + 4 * n + d), c4);
    c5 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k8 + 5 * n + d), c5);
    c6 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k8 + 6 * n + d), c6);
    c7 = _mm256_fmadd_ps(qv, _mm256_loadu_ps(k8 + 7 * n + d), c7);
  }
  // hadd(a, b) = [a0+a1, a2+a3, b0+b1, b2+b3 | a4+a5, a6+a7, b4+b5, b6+b7]
  const __m256 h0123 = _mm256_hadd_ps(_mm256_hadd_ps(c0, c1), _mm256_hadd_ps(c2, c3));
  const __m256 h4567 = _mm256_hadd_ps(_mm256_hadd_ps(c4, c5), _mm256_hadd_ps(c6, c7));
  // low halves: (l0+l1)+(l2+l3) of keys 0-3 / 4-7; high halves: (l4+l5)+(l6+l7).
  const __m256 lo = _mm256_permute2f128_ps(h0123, h4567, 0x20);
  const __m256 hi = _mm256_permute2f128_ps(h0123, h4567, 0x31);
  return _mm256_add_ps(lo, hi);
}

float Reduce8(const float* l) { return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7])); }

// One tile's update of one query's (acc, m, s) state; keys [0, nt) of the tile.
void TileUpdate(const float* q, const float* kt, const float* vt, int64_t hd, int64_t nt, float scale, float* acc,
                float* m_state, float* s_state) {
  alignas(32) float s[kT], p[kT], lane[8];
  const __m256 vscale = _mm256_set1_ps(scale);
  const int64_t nb = (nt + 7) / 8;
  for (int64_t b = 0; b < nb; ++b) _mm256_store_ps(s + 8 * b, _mm256_mul_ps(Dot8Keys(q, kt + 8 * b * hd, hd), vscale));
  for (int64_t i = nt; i < kT; ++i) s[i] = -INFINITY;
  __m256 vm = _mm256_set1_ps(-INFINITY);
  for (int64_t b = 0; b < kT / 8; ++b) vm = _mm256_max_ps(_mm256_load_ps(s + 8 * b), vm);
  _mm256_store_ps(lane, vm);
  float m = -INFINITY;
  for (int l = 0; l < 8; ++l) m = lane[l] > m ? lane[l] : m;
  const float M = *m_state;
  const float m_new = m > M ? m : M;
  const float alpha = ExpF32(M - m_new);
  const __m256 vmn = _mm256_set1_ps(m_new);
  __m256 vsum = _mm256_setzero_ps();
  for (int64_t b = 0; b < kT / 8; ++b) {
    const __m256 pv = ExpF32x8(_mm256_sub_ps(_mm256_load_ps(s + 8 * b), vmn));
    _mm256_store_ps(p + 8 * b, pv);
    vsum = _mm256_add_ps(vsum, pv);
  }
  _mm256_store_ps(lane, vsum);
  *s_state = std::fma(*s_state, alpha, Reduce8(lane));
  *m_state = m_new;
  const __m256 va = _mm256_set1_ps(alpha);
  const bool rescale = alpha != 1.0f;
  // 64 dims (8 registers) at a time, then 8 at a time; each dim sums keys in order.
  int64_t d0 = 0;
  for (; d0 + 64 <= hd; d0 += 64) {
    float* ac = acc + d0;
    __m256 r0 = _mm256_loadu_ps(ac), r1 = _mm256_loadu_ps(ac + 8), r2 = _mm256_loadu_ps(ac + 16),
           r3 = _mm256_loadu_ps(ac + 24), r4 = _mm256_loadu_ps(ac + 32), r5 = _mm256_loadu_ps(ac + 40),
           r6 = _mm256_loadu_ps(ac + 48), r7 = _mm256_loadu_ps(ac + 56);
    if (rescale) {
      r0 = _mm256_mul_ps(r0, va), r1 = _mm256_mul_ps(r1, va), r2 = _mm256_mul_ps(r2, va), r3 = _mm256_mul_ps(r3, va);
      r4 = _mm256_mul_ps(r4, va), r5 = _mm256_mul_ps(r5, va), r6 = _mm256_mul_ps(r6, va), r7 = _mm256_mul_ps(r7, va);
    }
    const float* v = vt + d0;
    for (int64_t i = 0; i < nt; ++i, v += hd) {
      const __m256 pb = _mm256_broadcast_ss(p + i);
      r0 = _mm256_fmadd_ps(pb, _mm256_loadu_ps(v), r0);
      r1 = _mm256_fmadd_ps(pb, _mm256_loadu_ps(v + 8), r1);
      r2 = _mm256_fmadd_ps(pb, _mm256_loadu_ps(v + 16), r2);
      r3 = _mm256_fmadd_ps(pb, _mm256_loadu_ps(v + 24), r3);
      r4 = _mm256_fmadd_ps(pb, _mm256_loadu_ps(v + 32), r4);
      r5 = _mm256_fmadd_ps(pb, _mm256_loadu_ps(v + 40), r5);
      r6 = _mm256_fmadd_ps(pb, _mm256_loadu_ps(v + 48), r6);
      r7 = _mm256_fmadd_ps(pb, _mm256_loadu_ps(v + 56), r7);
    }
    _mm256_storeu_ps(ac, r0), _mm256_storeu_ps(ac + 8, r1), _mm256_storeu_ps(ac + 16, r2);
    _mm256_storeu_ps(ac + 24, r3), _mm256_storeu_ps(ac + 32, r4), _mm256_storeu_ps(ac + 40, r5);
    _mm256_storeu_ps(ac + 48, r6), _mm256_storeu_ps(ac + 56, r7);
  }
  for (; d0 < hd; d0 += 8) {
    __m256 r = _mm256_loadu_ps(acc + d0);
    if (rescale) r = _mm256_mul_ps(r, va);
    for (int64_t i = 0; i < nt; ++i) r = _mm256_fmadd_ps(_mm256_broadcast_ss(p + i), _mm256_loadu_ps(vt + i * hd + d0), r);
    _mm256_storeu_ps(acc + d0, r);
  }
}

}  // namespace

void AttendGroupAvx2(const AttentionArgs& a, std::span<const AttentionQuery> queries, float* scratch) {
  const KvPages& kv = *a.kv;
  const int64_t HD = a.head_dim;  // multiple of 8
  const int64_t nq = static_cast<int64_t>(queries.size());
  float* kt = scratch;
  float* vt = kt + kT * HD;
  float* acc = vt + kT * HD;
  float* qr = acc + nq * HD;  // q rounded to f16, in f32
  float* ms = qr + nq * HD;
  float* ss = ms + nq;
  int64_t n_max = 0;
  for (int64_t qi = 0; qi < nq; ++qi) {
    n_max = std::max(n_max, queries[qi].n_keys);
    std::fill(acc + qi * HD, acc + (qi + 1) * HD, 0.0f);
    for (int64_t d = 0; d < HD; d += 8)
      _mm256_storeu_ps(qr + qi * HD + d,
                       a.round_q ? _mm256_cvtph_ps(_mm256_cvtps_ph(_mm256_loadu_ps(queries[qi].q + d),
                                                                   _MM_FROUND_TO_NEAREST_INT))
                                 : _mm256_loadu_ps(queries[qi].q + d));
    ms[qi] = -INFINITY;
    ss[qi] = 0.0f;
  }
  for (int64_t j0 = 0; j0 < n_max; j0 += kT) {
    const int64_t nt_max = std::min(kT, n_max - j0);
    PrefetchTilesAhead(a, j0, n_max);
    // Walk the tile's keys page by page (no division per key).
    int64_t page = j0 / kv.page_tokens(), slot = j0 % kv.page_tokens();
    for (int64_t i = 0; i < nt_max;) {
      const uint16_t* k = kv.Row(a.block_table[page], a.layer, 0, slot) + a.kv_head * HD;
      const uint16_t* v = kv.Row(a.block_table[page], a.layer, 1, slot) + a.kv_head * HD;
      const int64_t run = std::min(nt_max - i, kv.page_tokens() - slot);
      for (int64_t r = 0; r < run; ++r, ++i) {
        ConvertRow(k + r * kv.kv_dim(), kt + i * HD, HD);
        ConvertRow(v + r * kv.kv_dim(), vt + i * HD, HD);
      }
      ++page;
      slot = 0;
    }
    const int64_t nt_pad = (nt_max + 7) & ~int64_t{7};
    std::fill(kt + nt_max * HD, kt + nt_pad * HD, 0.0f);
    for (int64_t qi = 0; qi < nq; ++qi) {
      const AttentionQuery& query = queries[qi];
      if (query.n_keys <= j0) continue;
      const int64_t nt = std::min(kT, query.n_keys - j0);
      TileUpdate(qr + qi * HD, kt, vt, HD, nt, a.scale, acc + qi * HD, &ms[qi], &ss[qi]);
    }
  }
  for (int64_t qi = 0; qi < nq; ++qi) {
    const AttentionQuery& query = queries[qi];
    if (query.n_keys <= 0) {
      std::fill(query.out, query.out + HD, 0.0f);
      continue;
    }
    const __m256 vs = _mm256_set1_ps(ss[qi]);
    for (int64_t d = 0; d < HD; d += 8)
      _mm256_storeu_ps(query.out + d, _mm256_div_ps(_mm256_loadu_ps(acc + qi * HD + d), vs));
  }
}

}  // namespace pg
