// Mixture-of-Experts kernels (moe.h).
#include "base/expert_groups.h"
#include "gpu/kernels/fp8_matmul.h"
#include "gpu/kernels/moe.h"
#include "gpu/kernels/reduce.cuh"
#include "gpu/kernels/warp_rows.cuh"
#include "gpu/kernels/wtype_launch.cuh"

namespace pg::gpu {
namespace {

constexpr int kThreads = 128;
constexpr int kMaxExperts = 1024;
constexpr int kMaxGroups = kMaxRouterGroups;

PG_GLOBAL void RouteKernel(RouterSpec r, const float* logits, const float* bias, int32_t* experts, float* weights) {
  __shared__ float probs[kMaxExperts];
  __shared__ float scratch[kMaxWarps];
  const int64_t t = blockIdx.x;
  const float* lg = logits + t * r.n_expert;
  const int tid = static_cast<int>(threadIdx.x);
  if (r.sigmoid) {
    for (int e = tid; e < r.n_expert; e += blockDim.x) probs[e] = 1.0f / (1.0f + expf(-lg[e]));
  } else {
    float m = -INFINITY;
    for (int e = tid; e < r.n_expert; e += blockDim.x) m = fmaxf(m, lg[e]);
    m = BlockMax(m, scratch);
    float sum = 0.0f;
    for (int e = tid; e < r.n_expert; e += blockDim.x) {
      probs[e] = expf(lg[e] - m);
      sum += probs[e];
    }
    sum = BlockSum(sum, scratch);
    for (int e = tid; e < r.n_expert; e += blockDim.x) probs[e] /= sum;
  }
  __syncthreads();
  if (tid != 0) return;
  bool keep[kMaxGroups];
  const int group_size = r.n_group > 1 ? r.n_expert / r.n_group : r.n_expert;
  if (r.n_group > 1) KeepExpertGroups(r.n_expert, r.n_group, r.n_group_used, probs, bias, keep);
  // Top-k by repeated selection (k is small next to n_expert), as RouteToken.
  int32_t* ex = experts + t * r.k;
  float* wt = weights + t * r.k;
  for (int j = 0; j < r.k; ++j) {
    int best = -1;
    float best_score = 0.0f;
    for (int e = 0; e < r.n_expert; ++e) {
      if (r.n_group > 1 && !keep[e / group_size]) continue;
      bool taken = false;
      for (int i = 0; i < j && !taken; ++i) taken = ex[i] == e;
      if (taken) continue;
      const float sc = bias ? probs[e] + bias[e] : probs[e];
      if (best < 0 || sc > best_score || (isnan(best_score) && !isnan(sc))) {
        best = e;
        best_score = sc;
      }
    }
    ex[j] = best;
    wt[j] = probs[best];
  }
  if (r.norm_weights) {
    float sum = 0.0f;
    for (int j = 0; j < r.k; ++j) sum += wt[j];
    sum = fmaxf(sum, 6.103515625e-5f);
    for (int j = 0; j < r.k; ++j) wt[j] /= sum;
  }
  if (r.weights_scale != 0.0f && r.weights_scale != 1.0f) {
    for (int j = 0; j < r.k; ++j) wt[j] *= r.weights_scale;
  }
}

// One block: counts by atomics, then thread 0 scans and places in (token, slot)
// order, so each expert's rows keep the CPU's order.
PG_GLOBAL void SortKernel(const int32_t* experts, int64_t pairs, int32_t n_expert, int32_t* offsets, int32_t* row_token,
                          int32_t* slot_row, int32_t k) {
  __shared__ int32_t count[kMaxExperts + 1];
  const int tid = static_cast<int>(threadIdx.x);
  for (int e = tid; e <= n_expert; e += blockDim.x) count[e] = 0;
  __syncthreads();
  for (int64_t i = tid; i < pairs; i += blockDim.x) atomicAdd(&count[experts[i]], 1);
  __syncthreads();
  if (tid != 0) return;
  int32_t run = 0;
  for (int e = 0; e < n_expert; ++e) {
    const int32_t c = count[e];
    offsets[e] = run;
    count[e] = run;  // becomes the cursor
    run += c;
  }
  offsets[n_expert] = run;
  for (int64_t i = 0; i < pairs; ++i) {
    const int32_t row = count[experts[i]]++;
    row_token[row] = static_cast<int32_t>(i / k);
    slot_row[i] = row;
  }
}

PG_GLOBAL void GatherKernel(const float* x, const int32_t* row_token, int64_t cols, float* out) {
  const int64_t r = blockIdx.x;
  const float* src = x + static_cast<int64_t>(row_token[r]) * cols;
  for (int64_t i = threadIdx.x; i < cols; i += blockDim.x) out[r * cols + i] = src[i];
}

// Expert blockIdx.y's rows, kMatMulTokens at a time; output rows by warps (warp_rows.cuh).
template <WType T>
PG_GLOBAL void GroupedKernel(const uint8_t* w, int64_t row_bytes, int64_t mat_bytes, int64_t rows, int64_t cols,
                             const int32_t* offsets, const float* xg, float* yg) {
  const int e = static_cast<int>(blockIdx.y);
  const int64_t r0 = offsets[e], r1 = offsets[e + 1], out = WarpRow();
  if (r0 == r1 || out >= rows) return;
  auto decode = [&](int64_t c, float* v) {
    DecodeChunk<T>(w + e * mat_bytes + out * row_bytes, c, 32, v);
    return 32;
  };
  WarpRowGrouped(decode, cols / 32, xg, cols, r0, r1, yg, rows, out);
}

PG_GLOBAL void CombineKernel(const float* yg, const int32_t* slot_row, const float* weights, int32_t k, int64_t n,
                             bool accumulate, float* out) {
  const int64_t t = blockIdx.x;
  for (int64_t d = threadIdx.x; d < n; d += blockDim.x) {
    float o = weights[t * k] * yg[static_cast<int64_t>(slot_row[t * k]) * n + d];
    for (int j = 1; j < k; ++j) o += weights[t * k + j] * yg[static_cast<int64_t>(slot_row[t * k + j]) * n + d];
    out[t * n + d] = accumulate ? out[t * n + d] + o : o;
  }
}

}  // namespace

gpuError_t RouteTokens(const RouterSpec& r, const float* logits, const float* bias, int64_t T, int32_t* experts,
                       float* weights, gpuStream_t s) {
  if (r.n_expert <= 0 || r.n_expert > kMaxExperts || r.k <= 0 || r.k > r.n_expert || r.k > 32 || T < 0 ||
      r.n_group <= 0 || r.n_group > kMaxGroups || r.n_expert % r.n_group != 0 || r.n_group_used <= 0 ||
      r.n_group_used > r.n_group) {
    return gpuErrorInvalidValue;
  }
  if (T == 0) return gpuSuccess;
  PG_LAUNCH(RouteKernel, dim3(static_cast<unsigned>(T)), kThreads, 0, s, r, logits, bias, experts, weights);
  return gpuGetLastError();
}

gpuError_t SortByExpert(const int32_t* experts, int64_t T, int32_t k, int32_t n_expert, int32_t* offsets,
                        int32_t* row_token, int32_t* slot_row, gpuStream_t s) {
  if (T < 0 || k <= 0 || n_expert <= 0 || n_expert > kMaxExperts) return gpuErrorInvalidValue;
  PG_LAUNCH(SortKernel, dim3(1), kThreads, 0, s, experts, T * k, n_expert, offsets, row_token, slot_row, k);
  return gpuGetLastError();
}

gpuError_t GatherRows(const float* x, const int32_t* row_token, int64_t n_rows, int64_t cols, float* out,
                      gpuStream_t s) {
  if (n_rows < 0 || cols <= 0) return gpuErrorInvalidValue;
  if (n_rows == 0) return gpuSuccess;
  PG_LAUNCH(GatherKernel, dim3(static_cast<unsigned>(n_rows)), kThreads, 0, s, x, row_token, cols, out);
  return gpuGetLastError();
}

gpuError_t GroupedMatMul(const DeviceMatrix& w, int32_t n_expert, const int32_t* offsets, const float* xg,
                         int64_t max_rows, float* yg, gpuStream_t s) {
  if (w.type == WType::kFP8_E4M3) return Fp8GroupedMatMul(w, n_expert, offsets, xg, max_rows, yg, s);
  const int64_t block = (w.type == WType::kQ4_K || w.type == WType::kQ6_K) ? 256 : 32;
  if (n_expert <= 0 || w.rows <= 0 || w.cols % block != 0 || w.row_bytes < WTypeRowBytes(w.type, w.cols) ||
      w.mat_bytes < w.rows * w.row_bytes) {
    return gpuErrorInvalidValue;
  }
  if (max_rows == 0) return gpuSuccess;
  const int64_t per_block = kThreads / PgHostWarpSize();
  const dim3 grid(static_cast<unsigned>((w.rows + per_block - 1) / per_block), static_cast<unsigned>(n_expert));
  const uint8_t* wd = static_cast<const uint8_t*>(w.data);
  PG_LAUNCH_PER_WTYPE(w.type, GroupedKernel, grid, kThreads, s, wd, w.row_bytes, w.mat_bytes, w.rows, w.cols, offsets,
                      xg, yg)
  return gpuGetLastError();
}

gpuError_t MoeCombine(const float* yg, const int32_t* slot_row, const float* weights, int64_t T, int32_t k, int64_t n,
                      bool accumulate, float* out, gpuStream_t s) {
  if (T < 0 || k <= 0 || n <= 0) return gpuErrorInvalidValue;
  if (T == 0) return gpuSuccess;
  PG_LAUNCH(CombineKernel, dim3(static_cast<unsigned>(T)), kThreads, 0, s, yg, slot_row, weights, k, n, accumulate,
            out);
  return gpuGetLastError();
}

}  // namespace pg::gpu
