// DeviceExecutor's multi-head latent attention (MLA) layer (deepseek2,
// glm-dsa): the CPU's MlaLayerRun (model/mla_layer.cc) stage by stage on the
// device kernels, with the DeepSeek sparse attention indexer on the layers
// that run one (the others reuse the last full layer's choice):
//
//   1. q_a (or q) and kv_a from h (Products);
//   2. RMSNorm of q_a; the latent row [RMSNorm(c) | RoPE(k_pe)] into the
//      token's slot (MlaLatentRows);
//   3. q = q_b(q_a); RoPE on q_pe, copied into the absorbed query, whose
//      latent part is W_kb[h] q_nope per head (MatMul over the head's matrix);
//   4. indexer layers: the indexer key into the cache (IndexerKeys), the
//      indexer queries, scores and top-k (IndexerScoresBatch, TopKRows);
//   5. MlaAttention over the latent rows: only the chosen rows past top-k;
//   6. W_vb[h] o_h per head, then attn_output into step_.proj.
#include <cmath>

#include "gpu/executor/device_check.h"
#include "gpu/executor/device_executor.h"
#include "gpu/kernels/elementwise.h"
#include "gpu/kernels/indexer.h"
#include "gpu/kernels/mla_attention.h"
#include "gpu/kernels/mla_rows.h"
#include "gpu/kernels/topk.h"

namespace pg::gpu {
namespace {

// Matrix h of a stack of per-head matrices.
DeviceMatrix Head(const DeviceMatrix& stack, int64_t h) {
  DeviceMatrix m = stack;
  m.data = static_cast<const uint8_t*>(stack.data) + h * stack.mat_bytes;
  return m;
}

template <typename T>
void Add(std::vector<std::pair<void**, int64_t>>& p, T** buf, int64_t n) {
  p.emplace_back(reinterpret_cast<void**>(buf), std::max<int64_t>(n, 1));
}

}  // namespace

std::vector<std::pair<void**, int64_t>> DeviceExecutor::MlaParts(int64_t T, int64_t ctx) {
  const ModelConfig& c = model_.config();
  const MlaConfig& m = c.mla;
  std::vector<std::pair<void**, int64_t>> p;
  if (!m.enabled) return p;
  const int64_t H = c.n_head, IQ = m.index_heads * m.index_dim;
  MlaStep& b = mla_;
  Add(p, &b.qa, T * m.q_lora), Add(p, &b.q, T * H * m.k_head()), Add(p, &b.kv, T * m.row());
  Add(p, &b.qabs, T * H * m.row()), Add(p, &b.o, T * H * m.kv_lora), Add(p, &b.av, T * H * m.v_head);
  Add(p, &b.ik, T * m.index_dim), Add(p, &b.iw, T * m.index_heads), Add(p, &b.iq, T * IQ);
  Add(p, &b.scores, m.sparse() ? T * ctx : 0), Add(p, &b.cos, T * m.rope / 2), Add(p, &b.sin, T * m.rope / 2);
  Add(p, &b.sel, T * m.index_top_k), Add(p, &b.sel_n, T);
  b.ld = ctx;
  return p;
}

Status DeviceExecutor::MlaAttention(int64_t l) {
  const ModelConfig& c = model_.config();
  const MlaConfig& m = c.mla;
  const DeviceLayer& L = w_->layers[static_cast<size_t>(l)];
  const MlaStep& b = mla_;
  const int64_t T = step_.T, H = c.n_head, KH = m.k_head(), R = m.row(), C = m.kv_lora, V = m.v_head;
  const RopeTable rt{b.cos, b.sin, m.rope};
  if (m.q_lora > 0) {
    PG_RETURN_IF_ERROR(Products(step_.h, {{&L.wq_a, b.qa}, {&L.wkv_a, b.kv}}));
    PG_GPU_TRY(RmsNormResidual(b.qa, nullptr, L.q_a_norm, b.qa, T, m.q_lora, c.rms_eps, stream_));
  } else {
    PG_RETURN_IF_ERROR(Products(step_.h, {{&L.wq, b.q}, {&L.wkv_a, b.kv}}));
  }
  PG_GPU_TRY(MlaLatentRows(b.kv, L.kv_a_norm, c.rms_eps, T, C, rt, step_.slots, kv_, l, stream_));
  if (m.q_lora > 0) PG_RETURN_IF_ERROR(Products(b.qa, {{&L.wq_b, b.q}}));
  PG_GPU_TRY(RopeHeads(b.q, T, H, KH, m.nope, rt, b.qabs, R, C, stream_));
  for (int64_t h = 0; h < H; ++h)
    PG_GPU_TRY(MatMul(Head(L.wk_b, h), b.q + h * KH, H * KH, T, b.qabs + h * R, H * R, stream_));
  if (const int64_t slot = m.IndexSlot(l); slot >= 0) PG_RETURN_IF_ERROR(MlaIndexer(l, slot));
  // sel: a shared layer reads the last full layer's choice.
  const MlaBatch a{.q = b.qabs,
                   .out = b.o,
                   .n_rows = T,
                   .heads = H,
                   .kv_lora = C,
                   .rope = m.rope,
                   .scale = static_cast<float>(m.kq_scale),
                   .block_tables = step_.tables,
                   .table_offset = step_.table_off,
                   .n_keys = step_.n_keys,
                   .sel = m.sparse() ? b.sel : nullptr,
                   .sel_n = b.sel_n,
                   .top_k = m.index_top_k};
  PG_GPU_TRY(gpu::MlaAttention(a, kv_, l, stream_));
  for (int64_t h = 0; h < H; ++h)
    PG_GPU_TRY(MatMul(Head(L.wv_b, h), b.o + h * C, H * C, T, b.av + h * V, H * V, stream_));
  return Products(b.av, {{&L.wo, step_.proj}});
}

// Layer l's indexer (its slot among the indexer layers): keys into the
// cache, queries, scores and each token's top-k into mla_.sel.
Status DeviceExecutor::MlaIndexer(int64_t l, int64_t slot) {
  const ModelConfig& c = model_.config();
  const MlaConfig& m = c.mla;
  const DeviceLayer& L = w_->layers[static_cast<size_t>(l)];
  const MlaStep& b = mla_;
  const int64_t T = step_.T, D = c.n_embd, IH = m.index_heads, ID = m.index_dim;
  const RopeTable rt{b.cos, b.sin, m.rope};
  // The indexer's products stay on MatMul (f32 activations) in every mode:
  // the choice of keys is as rounding-sensitive as the router's.
  PG_GPU_TRY(MatMul(L.ix_k, step_.h, D, T, b.ik, ID, stream_));
  PG_GPU_TRY(MatMul(L.ix_proj, step_.h, D, T, b.iw, IH, stream_));
  const float w_scale = 1.0f / std::sqrt(static_cast<float>(ID * IH));
  PG_GPU_TRY(
      IndexerKeys(b.ik, L.ix_k_norm, L.ix_k_norm_b, T, ID, rt, step_.slots, kv_, slot, b.iw, IH, w_scale, stream_));
  PG_GPU_TRY(MatMul(L.ix_q_b, b.qa, m.q_lora, T, b.iq, IH * ID, stream_));
  PG_GPU_TRY(RopeHeads(b.iq, T, IH, ID, 0, rt, nullptr, 0, 0, stream_));
  const IndexerBatch ib{.iq = b.iq,
                        .w = b.iw,
                        .n_rows = T,
                        .heads = IH,
                        .dim = ID,
                        .top_k = m.index_top_k,
                        .index_slot = slot,
                        .block_tables = step_.tables,
                        .table_offset = step_.table_off,
                        .n_keys = step_.n_keys,
                        .scores = b.scores,
                        .ld = b.ld};
  PG_GPU_TRY(IndexerScoresBatch(ib, kv_, stream_));
  PG_GPU_TRY(TopKRows(b.scores, b.ld, step_.n_keys, T, m.index_top_k, b.sel, b.sel_n, stream_));
  (void)l;
  return Status::Ok();
}

}  // namespace pg::gpu
