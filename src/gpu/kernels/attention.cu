// Paged attention (attention.h). One block per (query row, kv head); shared
// memory holds the group's queries, accumulators and one tile's weights:
//
//   q[G][hd] | acc[G][hd] | p[G][kAttnTileKeys] | M[G] | S[G] | a[G]   (f32)
//
// Per tile: the threads compute the G x 32 scores (one dot product each),
// thread g < G runs group head g's online-softmax step, then every thread
// updates its (g, d) accumulators with the tile's V rows.
#include "gpu/kernels/attention.h"
#include "gpu/kernels/dequant.cuh"

namespace pg::gpu {
namespace {

constexpr int kThreads = 128;

PG_DEVICE float KvElem(const uint16_t* row, int64_t i, bool bf16) {
  return bf16 ? Bf16ToFloat(row[i]) : HalfToFloat(row[i]);
}

size_t SmemFloats(int64_t group, int64_t hd) { return size_t(2 * group * hd + group * kAttnTileKeys + 3 * group); }

PG_GLOBAL void PagedAttentionKernel(AttentionBatch b, DeviceKvPages kv, int64_t layer) {
  const int64_t row = blockIdx.x, kvh = blockIdx.y;
  const int64_t hd = kv.head_dim, G = b.n_heads / kv.n_kv_heads;
  const int64_t GD = G * hd;
  float* q = PgDynamicShared<float>();
  float* acc = q + GD;
  float* p = acc + GD;
  float* M = p + G * kAttnTileKeys;
  float* S = M + G;
  float* a = S + G;
  const int tid = static_cast<int>(threadIdx.x), nt = static_cast<int>(blockDim.x);
  const float* qrow = b.q + (row * b.n_heads + kvh * G) * hd;  // the group's heads are consecutive
  for (int64_t i = tid; i < GD; i += nt) {
    q[i] = b.round_q ? HalfToFloat(FloatToHalf(qrow[i])) : qrow[i];
    acc[i] = 0.0f;
  }
  for (int64_t g = tid; g < G; g += nt) {
    M[g] = -INFINITY;
    S[g] = 0.0f;
  }
  __syncthreads();
  const int32_t* table = b.block_tables + b.table_offset[row];
  const int64_t n_keys = b.n_keys[row];
  for (int64_t j0 = 0; j0 < n_keys; j0 += kAttnTileKeys) {
    const int tile = static_cast<int>(n_keys - j0 < kAttnTileKeys ? n_keys - j0 : kAttnTileKeys);
    // Scores: one (g, j) pair per thread at a time, the dot over head_dim in
    // order (no lane exchange: a K row is 128-256 contiguous bytes).
    for (int64_t pr = tid; pr < G * kAttnTileKeys; pr += nt) {
      const int64_t g = pr / kAttnTileKeys;
      const int j = static_cast<int>(pr % kAttnTileKeys);
      if (j >= tile) {
        p[pr] = -INFINITY;
        continue;
      }
      const int64_t key = j0 + j;
      const uint16_t* k = kv.Row(table[key / kv.page_tokens], layer, 0, key % kv.page_tokens) + kvh * hd;
      const float* qg = q + g * hd;
      float d = 0.0f;
      for (int64_t i = 0; i < hd; ++i) d += qg[i] * KvElem(k, i, kv.bf16);
      p[pr] = d * b.scale;
    }
    __syncthreads();
    // Online softmax step, one thread per group head.
    for (int64_t g = tid; g < G; g += nt) {
      float m = -INFINITY;
      for (int j = 0; j < tile; ++j) m = fmaxf(m, p[g * kAttnTileKeys + j]);
      const float m_new = fmaxf(M[g], m);
      const float alpha = expf(M[g] - m_new);
      float sum = 0.0f;
      for (int j = 0; j < kAttnTileKeys; ++j) {
        const float e = j < tile ? expf(p[g * kAttnTileKeys + j] - m_new) : 0.0f;
        p[g * kAttnTileKeys + j] = e;
        sum += e;
      }
      S[g] = S[g] * alpha + sum;
      M[g] = m_new;
      a[g] = alpha;
    }
    __syncthreads();
    // Accumulators: (g, d) pairs over the threads.
    for (int64_t i = tid; i < GD; i += nt) {
      const int64_t g = i / hd, d = i % hd;
      float v_acc = acc[i] * a[g];
      for (int j = 0; j < tile; ++j) {
        const int64_t key = j0 + j;
        const uint16_t* v = kv.Row(table[key / kv.page_tokens], layer, 1, key % kv.page_tokens) + kvh * hd;
        v_acc += p[g * kAttnTileKeys + j] * KvElem(v, d, kv.bf16);
      }
      acc[i] = v_acc;
    }
    __syncthreads();
  }
  float* orow = b.out + (row * b.n_heads + kvh * G) * hd;
  for (int64_t i = tid; i < GD; i += nt) {
    const float s = S[i / hd];
    orow[i] = s == 0.0f ? 0.0f : acc[i] / s;
  }
}

}  // namespace

gpuError_t PagedAttention(const AttentionBatch& b, const DeviceKvPages& kv, int64_t layer, gpuStream_t s) {
  if (b.n_rows < 0 || kv.n_kv_heads <= 0 || kv.head_dim <= 0 || b.n_heads % kv.n_kv_heads != 0 ||
      b.n_heads < kv.n_kv_heads || layer < 0) {
    return gpuErrorInvalidValue;
  }
  if (b.n_rows == 0) return gpuSuccess;
  const size_t smem = SmemFloats(b.n_heads / kv.n_kv_heads, kv.head_dim) * sizeof(float);
  if (smem > 48 * 1024) return gpuErrorInvalidValue;  // the default dynamic shared memory limit
  const dim3 grid(static_cast<unsigned>(b.n_rows), static_cast<unsigned>(kv.n_kv_heads));
  PG_LAUNCH(PagedAttentionKernel, grid, kThreads, smem, s, b, kv, layer);
  return gpuGetLastError();
}

}  // namespace pg::gpu
