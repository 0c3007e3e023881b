// DeviceExecutor's per-layer work (device_executor.h): attention block, FFN
// (dense SwiGLU or MoE), and the logit rows.
#include <cmath>

#include "base/check.h"
#include "gpu/executor/device_check.h"
#include "gpu/executor/device_executor.h"
#include "gpu/kernels/attention.h"
#include "gpu/kernels/elementwise.h"
#include "gpu/kernels/fp8_matmul.h"
#include "gpu/kernels/kv_write.h"
#include "gpu/kernels/moe.h"

namespace pg::gpu {

// In: step_.h = RMSNorm(x) with layer l's attn_norm. Out: x += attention +
// FFN, h = RMSNorm(x) with the next layer's attn_norm (or output_norm).
Status DeviceExecutor::Layer(int64_t l) {
  const ModelConfig& c = model_.config();
  const DeviceLayer& L = w_->layers[static_cast<size_t>(l)];
  const int64_t T = step_.T, D = c.n_embd;
  PG_RETURN_IF_ERROR(c.mla.enabled ? MlaAttention(l) : Attention(l));  // step_.proj = the attention's output
  PG_GPU_TRY(RmsNormResidual(step_.proj, step_.x, L.ffn_norm, step_.h, T, D, c.rms_eps, stream_));
  if (c.IsMoeLayer(l)) {
    PG_RETURN_IF_ERROR(MoeFfn(L));
  } else {
    PG_RETURN_IF_ERROR(DenseFfn(L.gate, L.up, L.down, step_.ffn));
  }
  const bool last = l + 1 == c.n_layer;
  const float* next_norm = last ? w_->output_norm : w_->layers[static_cast<size_t>(l + 1)].attn_norm;
  PG_GPU_TRY(RmsNormResidual(step_.ffn, step_.x, next_norm, step_.h, T, D, c.rms_eps, stream_));
  return Status::Ok();
}

// Multi-head (GQA) attention of layer l: step_.proj = wo(attention(h)).
Status DeviceExecutor::Attention(int64_t l) {
  const ModelConfig& c = model_.config();
  const DeviceLayer& L = w_->layers[static_cast<size_t>(l)];
  const int64_t T = step_.T, QD = c.q_dim(), KVD = c.kv_dim(), HD = c.head_dim;
  PG_RETURN_IF_ERROR(Products(step_.h, {{&L.wq, step_.q}, {&L.wk, step_.k}, {&L.wv, step_.v}}));
  if (L.bq) {
    PG_GPU_TRY(AddBias(step_.q, L.bq, T, QD, stream_));
    PG_GPU_TRY(AddBias(step_.k, L.bk, T, KVD, stream_));
    PG_GPU_TRY(AddBias(step_.v, L.bv, T, KVD, stream_));
  }
  if (L.q_norm) {
    PG_GPU_TRY(RmsNormResidual(step_.q, nullptr, L.q_norm, step_.q, T * c.n_head, HD, c.rms_eps, stream_));
    PG_GPU_TRY(RmsNormResidual(step_.k, nullptr, L.k_norm, step_.k, T * c.n_head_kv, HD, c.rms_eps, stream_));
  }
  const bool neox = c.rope_style == RopeStyle::kNeox;
  PG_GPU_TRY(Rope(step_.q, T, c.n_head, HD, c.n_rot, step_.pos, w_->inv_freq, neox, stream_));
  PG_GPU_TRY(Rope(step_.k, T, c.n_head_kv, HD, c.n_rot, step_.pos, w_->inv_freq, neox, stream_));
  PG_GPU_TRY(WriteKvRows(step_.k, step_.v, T, step_.slots, kv_, l, stream_));
  // round_q: as the CPU, q rounded to f16 against f16 keys.
  const AttentionBatch a{.q = step_.q,
                         .out = step_.attn,
                         .n_rows = step_.T,
                         .n_heads = c.n_head,
                         .block_tables = step_.tables,
                         .table_offset = step_.table_off,
                         .n_keys = step_.n_keys,
                         .scale = 1.0f / std::sqrt(static_cast<float>(c.head_dim)),
                         .round_q = !kv_.bf16};
  PG_GPU_TRY(PagedAttention(a, kv_, l, stream_));
  return Products(step_.attn, {{&L.wo, step_.proj}});
}

Status DeviceExecutor::Products(const float* x, std::initializer_list<ProductOut> outs) {
  const int64_t T = step_.T;
  if (options_.gemm_min_tokens <= 0 || T < options_.gemm_min_tokens) {
    for (const auto& [w, y] : outs) PG_GPU_TRY(MatMul(*w, x, w->cols, T, y, w->rows, stream_));
    return Status::Ok();
  }
  const int64_t cols = outs.begin()->first->cols;
  PG_GPU_TRY(RoundToBf16(x, step_.x16, T * cols, stream_));  // once for every product of x
  for (const auto& [w, y] : outs) {
    PG_CHECK(w->cols == cols);
    if (options_.fp8_gemm && w->type == WType::kFP8_E4M3) {  // FP8 activations (device_options.h)
      PG_GPU_TRY(GemmFp8(*w, x, T, y, step_.fp8, step_.fp8_bytes, stream_));
      continue;
    }
    PG_GPU_TRY(DequantToBf16(*w, gemm_w_, stream_));
    PG_GPU_TRY(GemmBf16(gemm_w_, step_.x16, y, w->rows, T, cols, stream_));
  }
  return Status::Ok();
}

// out = down(silu(gate h) * up h), for the step's T rows of h.
Status DeviceExecutor::DenseFfn(const DeviceMatrix& gate, const DeviceMatrix& up, const DeviceMatrix& down,
                                float* out) {
  const int64_t T = step_.T, F = gate.rows;
  PG_RETURN_IF_ERROR(Products(step_.h, {{&gate, step_.gate}, {&up, step_.up}}));
  PG_GPU_TRY(SiluMul(step_.gate, step_.up, step_.gate, T * F, stream_));
  PG_RETURN_IF_ERROR(Products(step_.gate, {{&down, out}}));
  return Status::Ok();
}

// step_.ffn = sum over the token's top-k experts of weight * SwiGLU_e(h)
// (+ the shared expert's SwiGLU, when the model has one).
Status DeviceExecutor::MoeFfn(const DeviceLayer& L) {
  const ModelConfig& c = model_.config();
  const int64_t T = step_.T, D = c.n_embd, FE = c.moe.n_ff_exp;
  const auto E = static_cast<int32_t>(c.moe.n_expert), K = static_cast<int32_t>(c.moe.n_expert_used);
  RouterSpec r;
  r.n_expert = E;
  r.k = K;
  r.sigmoid = c.moe.gating == ExpertGating::kSigmoid;
  r.norm_weights = c.moe.norm_weights;
  r.weights_scale = c.moe.weights_scale;
  r.n_group = static_cast<int32_t>(c.moe.n_group);
  r.n_group_used = static_cast<int32_t>(c.moe.n_group_used);
  // The router stays on MatMul (f32 activations) in every mode: a small
  // product, and the expert choice is the step's most rounding-sensitive part.
  PG_GPU_TRY(MatMul(L.router, step_.h, D, T, step_.router, E, stream_));
  PG_GPU_TRY(RouteTokens(r, step_.router, L.router_bias, T, step_.experts, step_.route_w, stream_));
  PG_GPU_TRY(SortByExpert(step_.experts, T, K, E, step_.offsets, step_.row_token, step_.slot_row, stream_));
  PG_GPU_TRY(GatherRows(step_.h, step_.row_token, T * K, D, step_.xg, stream_));
  PG_GPU_TRY(GroupedMatMul(L.gate_exps, E, step_.offsets, step_.xg, T * K, step_.gg, stream_));
  PG_GPU_TRY(GroupedMatMul(L.up_exps, E, step_.offsets, step_.xg, T * K, step_.ug, stream_));
  PG_GPU_TRY(SiluMul(step_.gg, step_.ug, step_.gg, T * K * FE, stream_));
  PG_GPU_TRY(GroupedMatMul(L.down_exps, E, step_.offsets, step_.gg, T * K, step_.yg, stream_));
  const bool shared = L.gate_shexp.rows > 0;
  if (shared) PG_RETURN_IF_ERROR(DenseFfn(L.gate_shexp, L.up_shexp, L.down_shexp, step_.ffn));
  PG_GPU_TRY(MoeCombine(step_.yg, step_.slot_row, step_.route_w, T, K, D, shared, step_.ffn, stream_));
  return Status::Ok();
}

// The logit rows: step_.h holds RMSNorm(x) with output_norm for every token;
// gather the rows that want logits, project them, copy them to pinned memory.
Status DeviceExecutor::Logits() {
  const ModelConfig& c = model_.config();
  const int64_t L = step_.L;
  PG_GPU_TRY(GatherRows(step_.h, step_.logit_rows, L, c.n_embd, step_.last, stream_));
  PG_GPU_TRY(MatMul(w_->output, step_.last, c.n_embd, L, step_.logits, c.n_vocab, stream_));
  PG_GPU_TRY(gpuMemcpyAsync(host_logits_, step_.logits, static_cast<size_t>(L * c.n_vocab) * 4, gpuMemcpyDeviceToHost,
                            stream_));
  return Status::Ok();
}

}  // namespace pg::gpu
