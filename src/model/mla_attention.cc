#include "model/mla_attention.h"

#include <cmath>
#include <cstring>

#include "model/dsa_indexer.h"

namespace pg {
namespace {

const uint16_t* LatentRow(const MlaAttentionArgs& a, int64_t pos) {
  const KvPages& kv = *a.kv;
  return kv.Row(a.block_table[pos / kv.page_tokens()], a.layer, 0, pos % kv.page_tokens());
}

}  // namespace

size_t MlaAttendScratchFloats(const MlaAttentionArgs& a, int64_t max_keys) {
  return static_cast<size_t>(a.n_heads * max_keys + a.kv_lora + a.rope);
}

void MlaAttend(const MlaAttentionArgs& a, const float* q, const int32_t* keys, int64_t n_keys, const uint8_t* allowed,
               float* out, float* scratch) {
  const int64_t H = a.n_heads, R = a.kv_lora + a.rope, C = a.kv_lora;
  float* p = scratch;                 // (H, n_keys) scores, then weights
  float* row = scratch + H * n_keys;  // (R) one widened row
  for (int64_t j = 0; j < n_keys; ++j) {
    const int64_t pos = keys ? keys[j] : j;
    WidenRow(LatentRow(a, pos), a.kv->dtype(), row, R);
    const bool masked = allowed != nullptr && allowed[pos] == 0;
    for (int64_t h = 0; h < H; ++h) {
      const float s = a.scale * DotLanes8(q + h * R, row, R);
      p[h * n_keys + j] = masked ? -INFINITY : s;
    }
  }
  float sums[1024];
  for (int64_t h = 0; h < H; ++h) {
    float* ph = p + h * n_keys;
    float m = -INFINITY;
    for (int64_t j = 0; j < n_keys; ++j) m = std::fmax(m, ph[j]);
    float sum = 0;
    for (int64_t j = 0; j < n_keys; ++j) {
      ph[j] = ph[j] == -INFINITY ? 0.0f : std::exp(ph[j] - m);
      sum += ph[j];
    }
    sums[h] = sum;
  }
  std::memset(out, 0, static_cast<size_t>(H * C) * sizeof(float));
  for (int64_t j = 0; j < n_keys; ++j) {
    const int64_t pos = keys ? keys[j] : j;
    // A masked key's weight is 0 for every head: fma(0, c, o) == o, exact zeros.
    WidenRow(LatentRow(a, pos), a.kv->dtype(), row, C);
    for (int64_t h = 0; h < H; ++h) {
      const float w = p[h * n_keys + j];
      FmaRow(w, row, out + h * C, C);
    }
  }
  for (int64_t h = 0; h < H; ++h) {
    const float inv = 1.0f / sums[h];
    for (int64_t d = 0; d < C; ++d) out[h * C + d] *= inv;
  }
}

}  // namespace pg
