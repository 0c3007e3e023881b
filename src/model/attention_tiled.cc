// kTiledF32 attention: the scalar reference (one query at a time) and the
// dispatch of AttendGroup. The arithmetic is specified in attention.h.
#include <algorithm>
#include <cmath>
#include <cstring>

#include "backend/cpu/cpu_features.h"
#include "backend/cpu/fp16.h"
#include "model/attention.h"
#include "model/attention_exp.h"

namespace pg {
namespace {

// ((l0+l1)+(l2+l3)) + ((l4+l5)+(l6+l7))
float Reduce8(const float* l) { return ((l[0] + l[1]) + (l[2] + l[3])) + ((l[4] + l[5]) + (l[6] + l[7])); }

float DotF32F16(const float* q, const uint16_t* k, int64_t n) {
  const int64_t n8 = n & ~int64_t{7};
  float lane[8] = {};
  for (int64_t d = 0; d < n8; d += 8)
    for (int l = 0; l < 8; ++l) lane[l] = std::fma(q[d + l], F16ToF32(k[d + l]), lane[l]);
  float r = Reduce8(lane);
  for (int64_t d = n8; d < n; ++d) r = std::fma(q[d], F16ToF32(k[d]), r);
  return r;
}

void TiledRowScalar(const AttentionArgs& a, const AttentionQuery& query) {
  const KvPages& kv = *a.kv;
  const int64_t HD = a.head_dim, T = kAttentionTileKeys;
  float acc[512], q[512];
  std::fill(acc, acc + HD, 0.0f);
  for (int64_t d = 0; d < HD; ++d) q[d] = a.round_q ? F16ToF32(F32ToF16(query.q[d])) : query.q[d];
  float M = -INFINITY, S = 0.0f;
  for (int64_t j0 = 0; j0 < query.n_keys; j0 += T) {
    const int64_t nt = std::min(T, query.n_keys - j0);
    float s[kAttentionTileKeys], p[kAttentionTileKeys];
    for (int64_t i = 0; i < T; ++i) {
      s[i] = -INFINITY;
      if (i >= nt) continue;
      const int64_t j = j0 + i;
      const uint16_t* k =
          kv.Row(a.block_table[j / kv.page_tokens()], a.layer, 0, j % kv.page_tokens()) + a.kv_head * HD;
      s[i] = DotF32F16(q, k, HD) * a.scale;
    }
    float m = -INFINITY;
    for (int64_t i = 0; i < T; ++i) m = s[i] > m ? s[i] : m;
    const float m_new = m > M ? m : M;
    const float alpha = ExpF32(M - m_new);
    float lane[8] = {};
    for (int64_t i = 0; i < T; ++i) {
      p[i] = ExpF32(s[i] - m_new);
      lane[i % 8] += p[i];
    }
    S = std::fma(S, alpha, Reduce8(lane));
    if (alpha != 1.0f)
      for (int64_t d = 0; d < HD; ++d) acc[d] *= alpha;
    for (int64_t i = 0; i < nt; ++i) {
      const int64_t j = j0 + i;
      const uint16_t* v =
          kv.Row(a.block_table[j / kv.page_tokens()], a.layer, 1, j % kv.page_tokens()) + a.kv_head * HD;
      for (int64_t d = 0; d < HD; ++d) acc[d] = std::fma(p[i], F16ToF32(v[d]), acc[d]);
    }
    M = m_new;
  }
  for (int64_t d = 0; d < HD; ++d) query.out[d] = query.n_keys > 0 ? acc[d] / S : 0.0f;
}

void GroupFallback(const AttentionArgs& a, std::span<const AttentionQuery> queries, float* scratch) {
  for (const AttentionQuery& query : queries) {
    AttentionArgs one = a;
    one.n_keys = query.n_keys;
    AttendOne(one, query.q, query.out, scratch);
  }
}

}  // namespace

size_t AttendGroupScratchFloats(int64_t head_dim, int64_t n_queries, int64_t max_keys) {
  // AVX2 / AVX-512: K and V tiles in f32, then per query q and acc[head_dim], M and S.
  const size_t tiled = static_cast<size_t>(2 * kAttentionTileKeys * head_dim + n_queries * (2 * head_dim + 2));
  return std::max(tiled, static_cast<size_t>(max_keys));  // bf16 fallback: n_keys scores
}

void AttendGroupScalar(const AttentionArgs& a, std::span<const AttentionQuery> queries, float* scratch) {
  if (a.kv->dtype() != KvDtype::kF16) return GroupFallback(a, queries, scratch);
  for (const AttentionQuery& query : queries) TiledRowScalar(a, query);
}

void AttendGroup(const AttentionArgs& a, std::span<const AttentionQuery> queries, float* scratch) {
  static const IsaLevel isa = ActiveIsa();  // PROSGROW_ISA can force a lower level
  if (a.kv->dtype() == KvDtype::kF16 && a.head_dim % 8 == 0) {
    if (isa >= IsaLevel::kAvx512) return AttendGroupAvx512(a, queries, scratch);
    if (isa >= IsaLevel::kAvx2) return AttendGroupAvx2(a, queries, scratch);
  }
  AttendGroupScalar(a, queries, scratch);  // bf16 KV falls back to AttendOne there
}

}  // namespace pg
