// Private: the parts of kLlamaF16's AttendOne (attention.h) that its scalar
// reference (attention.cc) and AVX2 form (attention_avx2.cc) share: where
// key j's K and V rows are, and the online-softmax bookkeeping of one key.
// The vector arithmetic on the accumulator stays in each file.
//
// Internal linkage on purpose: each file compiles its own copy with its own
// ISA flags (std::fma is an instruction only with -mfma).
#pragma once

#include <cmath>
#include <cstdint>

#include "model/attention.h"

namespace pg {
namespace {

// Key j's K (kv = 0) or V (kv = 1) row of a.kv_head: head_dim values.
inline const uint16_t* HeadRow(const AttentionArgs& a, int64_t j, int kv) {
  const KvPages& pages = *a.kv;
  return pages.Row(a.block_table[j / pages.page_tokens()], a.layer, kv, j % pages.page_tokens()) +
         a.kv_head * a.head_dim;
}

// The running maximum M and sum S over the keys so far. Step(s) takes the
// next key's score: where s is a new maximum, the accumulator must first be
// scaled by `rescale` (exp(M_old - M_new)); the key's V row then adds with
// weight `weight` (exp(s - M), 1 at a new maximum).
struct OnlineSoftmax {
  float S = 0.0f;
  float M = -INFINITY;
  float rescale = 1.0f;
  float weight = 1.0f;

  bool Step(float s) {
    rescale = 1.0f;
    weight = 1.0f;
    const bool new_max = s > M;
    if (new_max) {
      const float m_old = M;
      M = s;
      rescale = std::exp(m_old - M);
    } else {
      weight = std::exp(s - M);
    }
    S = std::fma(S, rescale, weight);  // contracted in the reference implementation too
    return new_max;
  }
  float InvSum() const { return S == 0.0f ? 0.0f : 1.0f / S; }
};

}  // namespace
}  // namespace pg
