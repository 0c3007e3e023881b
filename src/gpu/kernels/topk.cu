// Top-k selection (topk.h).
#include "gpu/kernels/topk.h"

namespace pg::gpu {
namespace {

constexpr int kThreads = 128;

// Higher score -> larger key; every NaN is 0 (below -inf's 0x007fffff); -0 is +0.
PG_DEVICE uint32_t OrderKey(float f) {
  if (isnan(f)) return 0u;
  if (f == 0.0f) f = 0.0f;
  const uint32_t u = PgFloatToBits(f);
  return (u & 0x80000000u) ? ~u : (u | 0x80000000u);
}

// The block's sum of v (every thread gets it). scratch: blockDim.x + 1 ints.
PG_DEVICE int64_t BlockCount(int64_t v, int64_t* scratch) {
  scratch[threadIdx.x] = v;
  __syncthreads();
  if (threadIdx.x == 0) {
    int64_t s = 0;
    for (unsigned i = 0; i < blockDim.x; ++i) s += scratch[i];
    scratch[blockDim.x] = s;
  }
  __syncthreads();
  const int64_t total = scratch[blockDim.x];
  __syncthreads();
  return total;
}

PG_GLOBAL void TopKKernel(const float* scores, int64_t ld, const int32_t* n_keys, int64_t k, int32_t* sel,
                          int32_t* sel_n) {
  __shared__ int64_t scratch[kThreads + 1];
  __shared__ int64_t gt[kThreads], eq[kThreads], start[kThreads];
  const int64_t t = blockIdx.x, n = n_keys[t];
  const int tid = static_cast<int>(threadIdx.x);
  int32_t* out = sel + t * k;
  if (n <= k) {
    for (int64_t i = tid; i < n; i += blockDim.x) out[i] = static_cast<int32_t>(i);
    if (tid == 0) sel_n[t] = static_cast<int32_t>(n);
    return;
  }
  const float* sc = scores + t * ld;
  uint32_t thresh = 0;  // the k-th largest key: the largest v with #(key >= v) >= k
  for (int bit = 31; bit >= 0; --bit) {
    const uint32_t cand = thresh | (1u << bit);
    int64_t c = 0;
    for (int64_t i = tid; i < n; i += blockDim.x) c += OrderKey(sc[i]) >= cand;
    if (BlockCount(c, scratch) >= k) thresh = cand;
  }
  // Contiguous chunks in position order: each thread's keys above the
  // threshold and its ties; ties are taken lowest positions first.
  const int64_t chunk = (n + blockDim.x - 1) / blockDim.x, lo = tid * chunk, hi = lo + chunk < n ? lo + chunk : n;
  int64_t g = 0, e = 0;
  for (int64_t i = lo; i < hi; ++i) {
    const uint32_t key = OrderKey(sc[i]);
    g += key > thresh;
    e += key == thresh;
  }
  gt[tid] = g, eq[tid] = e;
  __syncthreads();
  if (tid == 0) {
    int64_t total_gt = 0;
    for (unsigned i = 0; i < blockDim.x; ++i) total_gt += gt[i];
    int64_t ties_left = k - total_gt, at = 0;
    for (unsigned i = 0; i < blockDim.x; ++i) {
      const int64_t take = eq[i] < ties_left ? eq[i] : ties_left;
      start[i] = at;
      eq[i] = take;  // becomes the ties this chunk takes
      ties_left -= take;
      at += gt[i] + take;
    }
    sel_n[t] = static_cast<int32_t>(k);
  }
  __syncthreads();
  int64_t at = start[tid], ties = eq[tid];
  for (int64_t i = lo; i < hi; ++i) {
    const uint32_t key = OrderKey(sc[i]);
    if (key > thresh || (key == thresh && ties-- > 0)) out[at++] = static_cast<int32_t>(i);
  }
}

}  // namespace

gpuError_t TopKRows(const float* scores, int64_t ld, const int32_t* n_keys, int64_t T, int64_t k, int32_t* sel,
                    int32_t* sel_n, gpuStream_t s) {
  if (T < 0 || k <= 0 || ld < 0) return gpuErrorInvalidValue;
  if (T == 0) return gpuSuccess;
  PG_LAUNCH(TopKKernel, dim3(static_cast<unsigned>(T)), kThreads, 0, s, scores, ld, n_keys, k, sel, sel_n);
  return gpuGetLastError();
}

}  // namespace pg::gpu
