// The Mixture-of-Experts steps on the device (the CPU's MoeFfn, model/moe_ffn.h):
//
//   RouteTokens    router probabilities (softmax, or sigmoid), top-k on
//                  probs + selection bias among the experts of the kept groups
//                  (group-limited routing), ties: lower id; the bias never enters a
//                  weight), weights normalised by their sum (clamped at 2^-14)
//                  and scaled; the choices in descending score order (RouteToken,
//                  model/expert_router.h, is the reference)
//   SortByExpert   the (token, slot) pairs grouped by expert, a stable counting
//                  sort: offsets (n_expert + 1), row_token and slot_row as MoeScratch
//   GatherRows     each grouped row's input
//   GroupedMatMul  one product per expert over its rows (MatMul's kernel; an
//                  expert with no row costs one empty block)
//   MoeCombine     out[t] = sum_j weights[t, j] * yg[slot_row[t, j]] in slot order
//                  (plus out when accumulate: the shared expert's sum)
//
// All pointers are device memory. Thread-safety: as the stream.
#pragma once

#include <cstdint>

#include "gpu/kernels/matmul.h"
#include "gpu/runtime/gpu_vendor.h"

namespace pg::gpu {

struct RouterSpec {
  int32_t n_expert = 0;  // <= 1024
  int32_t k = 0;         // <= min(n_expert, 32)
  bool sigmoid = false;  // else softmax
  bool norm_weights = false;
  float weights_scale = 0;   // 0 or 1: none
  int32_t n_group = 1;       // expert groups (deepseek2), <= 256; 1: none
  int32_t n_group_used = 1;  // the groups kept: those whose two best probs + bias sum highest (ties: lower group)
};

// logits (T, n_expert); bias (n_expert) or null; experts, weights (T, k).
gpuError_t RouteTokens(const RouterSpec& r, const float* logits, const float* bias, int64_t T, int32_t* experts,
                       float* weights, gpuStream_t s);

// experts (T, k) -> offsets (n_expert + 1), row_token (T * k), slot_row (T * k):
// grouped row offsets[e] + i is expert e's i-th pair in (token, slot) order.
gpuError_t SortByExpert(const int32_t* experts, int64_t T, int32_t k, int32_t n_expert, int32_t* offsets,
                        int32_t* row_token, int32_t* slot_row, gpuStream_t s);

// out[r, :] = x[row_token[r], :] for r < n_rows (cols floats a row).
gpuError_t GatherRows(const float* x, const int32_t* row_token, int64_t n_rows, int64_t cols, float* out,
                      gpuStream_t s);

// For each expert e: yg[r] = W_e xg[r] for grouped rows r in [offsets[e], offsets[e+1]).
// stack: n_expert matrices, matrix e at data + e * mat_bytes. ldx = stack.cols, ldy = stack.rows.
gpuError_t GroupedMatMul(const DeviceMatrix& stack, int32_t n_expert, const int32_t* offsets, const float* xg,
                         int64_t max_rows, float* yg, gpuStream_t s);

// out (T, n) = the weighted sum of each token's k expert rows of yg.
gpuError_t MoeCombine(const float* yg, const int32_t* slot_row, const float* weights, int64_t T, int32_t k, int64_t n,
                      bool accumulate, float* out, gpuStream_t s);

}  // namespace pg::gpu
