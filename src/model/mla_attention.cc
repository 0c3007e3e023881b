#include "model/mla_attention.h"

#include <cmath>
#include <cstring>

#include "backend/cpu/cpu_features.h"
#include "model/dsa_indexer.h"

namespace pg {

void MlaWidenRow(const MlaAttentionArgs& a, int64_t pos, float* dst, int64_t n) {
  const KvPages& kv = *a.kv;
  WidenRow(kv.Row(a.block_table[pos / kv.page_tokens()], a.layer, 0, pos % kv.page_tokens()), kv.dtype(), dst, n);
}

size_t MlaAttendScratchFloats(const MlaAttentionArgs& a, int64_t max_keys) {
  // Scores (H, max_keys), then a tile of widened rows and the head-paired queries (MlaAttendAvx512).
  const int64_t R = a.kv_lora + a.rope;
  return static_cast<size_t>(a.n_heads * max_keys + kMlaTileKeys * R + (a.n_heads + 1) * R + 32);
}

void MlaSoftmaxRows(float* p, int64_t H, int64_t n, float* sums) {
  for (int64_t h = 0; h < H; ++h) {
    float* ph = p + h * n;
    float m = -INFINITY;
    for (int64_t j = 0; j < n; ++j) m = std::fmax(m, ph[j]);
    float sum = 0;
    for (int64_t j = 0; j < n; ++j) {
      ph[j] = ph[j] == -INFINITY ? 0.0f : std::exp(ph[j] - m);
      sum += ph[j];
    }
    sums[h] = sum;
  }
}

namespace {

// One row at a time: the scalar reference (vectors false), or the same
// operations through DotLanes8 / FmaRow (AVX2 + FMA where the host has them; the same bits).
void RowByRow(const MlaAttentionArgs& a, const float* q, const int32_t* keys, int64_t n_keys, const uint8_t* allowed,
              float* out, float* scratch, bool vectors) {
  const int64_t H = a.n_heads, R = a.kv_lora + a.rope, C = a.kv_lora;
  float* p = scratch;                 // (H, n_keys) scores, then weights
  float* row = scratch + H * n_keys;  // (R) one widened row
  for (int64_t j = 0; j < n_keys; ++j) {
    const int64_t pos = keys ? keys[j] : j;
    MlaWidenRow(a, pos, row, R);
    const bool masked = allowed != nullptr && allowed[pos] == 0;
    for (int64_t h = 0; h < H; ++h) {
      const float s = a.scale * (vectors ? DotLanes8(q + h * R, row, R) : DotLanes8Scalar(q + h * R, row, R));
      p[h * n_keys + j] = masked ? -INFINITY : s;
    }
  }
  float sums[1024];
  MlaSoftmaxRows(p, H, n_keys, sums);
  std::memset(out, 0, static_cast<size_t>(H * C) * sizeof(float));
  for (int64_t j = 0; j < n_keys; ++j) {
    // A masked key's weight is 0 for every head: fma(0, c, o) == o, exact zeros.
    MlaWidenRow(a, keys ? keys[j] : j, row, C);
    for (int64_t h = 0; h < H; ++h) {
      if (vectors)
        FmaRow(p[h * n_keys + j], row, out + h * C, C);
      else
        FmaRowScalar(p[h * n_keys + j], row, out + h * C, C);
    }
  }
  for (int64_t h = 0; h < H; ++h) {
    const float inv = 1.0f / sums[h];
    for (int64_t d = 0; d < C; ++d) out[h * C + d] *= inv;
  }
}

}  // namespace

void MlaAttendScalar(const MlaAttentionArgs& a, const float* q, const int32_t* keys, int64_t n_keys,
                     const uint8_t* allowed, float* out, float* scratch) {
  RowByRow(a, q, keys, n_keys, allowed, out, scratch, false);
}

void MlaAttend(const MlaAttentionArgs& a, const float* q, const int32_t* keys, int64_t n_keys, const uint8_t* allowed,
               float* out, float* scratch) {
  static const bool avx512 = ActiveIsa() >= IsaLevel::kAvx512;
  if (avx512)
    MlaAttendAvx512(a, q, keys, n_keys, allowed, out, scratch);
  else
    RowByRow(a, q, keys, n_keys, allowed, out, scratch, true);
}

}  // namespace pg
