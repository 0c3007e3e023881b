// Private to the AVX2 and AVX-512 tiled attention kernels
// (attention_tiled_avx2.cc, attention_tiled_avx512.cc): the scratch layout
// they share, the queries' preparation (each rounded to f16 unless
// !round_q, the running state cleared) and the final division by the sum of
// weights, in 256-bit vectors with F16C. Internal linkage on purpose, like
// attention_exp.h: each ISA's translation unit gets its own copy, compiled
// with its own flags. Include only from files compiled with -mavx2 -mf16c.
//
// scratch layout (floats):
//   kt[kAttentionTileKeys * head_dim]  K tile in f32 (the kernel's layout)
//   vt[kAttentionTileKeys][head_dim]   V tile in f32, row-major
//   acc[n_queries][head_dim]           running weighted sums of V
//   qr[n_queries][head_dim]            the queries as the arithmetic uses them
//   ms[n_queries], ss[n_queries]       running max and sum of weights
#pragma once

#include <immintrin.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <span>

#include "model/attention.h"
#include "model/attention_tiles.h"

namespace pg {
namespace {  // NOLINT(build/namespaces): see above

struct TiledScratch {
  float* kt;
  float* vt;
  TiledGroup g;
};

// Lays out scratch for the queries and prepares them. head_dim is a
// multiple of 8.
inline TiledScratch StartTiledGroup(const AttentionArgs& a, std::span<const AttentionQuery> queries, float* scratch) {
  const int64_t HD = a.head_dim, nq = static_cast<int64_t>(queries.size());
  float* kt = scratch;
  float* vt = kt + kAttentionTileKeys * HD;
  float* acc = vt + kAttentionTileKeys * HD;
  float* qr = acc + nq * HD;
  float* ms = qr + nq * HD;
  float* ss = ms + nq;
  for (int64_t qi = 0; qi < nq; ++qi) {
    std::fill(acc + qi * HD, acc + (qi + 1) * HD, 0.0f);
    for (int64_t d = 0; d < HD; d += 8) {
      const __m256 x = _mm256_loadu_ps(queries[qi].q + d);
      _mm256_storeu_ps(qr + qi * HD + d,
                       a.round_q ? _mm256_cvtph_ps(_mm256_cvtps_ph(x, _MM_FROUND_TO_NEAREST_INT)) : x);
    }
    ms[qi] = -INFINITY;
    ss[qi] = 0.0f;
  }
  return {kt, vt, {acc, qr, ms, ss, HD, a.scale}};
}

// Each query's output: acc / its sum of weights (zeros for a query of no keys).
inline void WriteTiledOutputs(std::span<const AttentionQuery> queries, const TiledGroup& g) {
  for (size_t qi = 0; qi < queries.size(); ++qi) {
    const AttentionQuery& query = queries[qi];
    if (query.n_keys <= 0) {
      std::fill(query.out, query.out + g.hd, 0.0f);
      continue;
    }
    const __m256 vs = _mm256_set1_ps(g.ss[qi]);
    for (int64_t d = 0; d < g.hd; d += 8)
      _mm256_storeu_ps(query.out + d, _mm256_div_ps(_mm256_loadu_ps(g.acc + qi * g.hd + d), vs));
  }
}

}  // namespace
}  // namespace pg
