#include "model/nextn_block.h"

#include <fmt/format.h>

#include <algorithm>

#include "backend/cpu/matmul_precise.h"
#include "backend/cpu/quant.h"
#include "backend/cpu/vec_ops.h"

namespace pg {

void NextnScratch::Reserve(const ModelConfig& c, int64_t n_tokens, int64_t n_logits, int64_t max_ctx, int n_threads) {
  if (n_tokens > cap_tokens_) {
    const auto T = static_cast<size_t>(n_tokens);
    const auto D = static_cast<size_t>(c.n_embd);
    x_.resize(T * D);
    h_.resize(T * D);
    cat_.resize(2 * T * D);
    gate_.resize(T * static_cast<size_t>(c.n_ff));
    up_.resize(T * static_cast<size_t>(c.n_ff));
    ffn_out_.resize(T * D);
    cos_.resize(T * static_cast<size_t>(c.mla.rope / 2));
    sin_.resize(T * static_cast<size_t>(c.mla.rope / 2));
    tok_seq_.resize(T);
    tok_pos_.resize(T);
    tok_id_.resize(T);
    mm_.Reserve(std::max({2 * c.n_embd, c.n_ff, c.moe.n_ff_exp * std::max<int64_t>(1, c.moe.n_shared)}), n_tokens);
    moe_.Reserve(c, n_tokens, n_threads);
    cap_tokens_ = n_tokens;
  }
  if (n_logits > cap_logits_) {
    last_.resize(static_cast<size_t>(n_logits * c.n_embd));
    cap_logits_ = n_logits;
  }
  mla_.Reserve(c, n_tokens, max_ctx, n_threads);
}

Result<NextnBlock> NextnBlock::Of(const Model& model) {
  const ModelConfig& mc = model.config();
  if (model.weights().nextn.empty())
    return InvalidArgument(fmt::format("{} has no NextN (MTP) layer ({} '{}', nextn_predict_layers {})",
                                       model.source().path(), mc.arch, mc.name, mc.n_nextn));
  const LayerWeights& L = model.weights().nextn[0].block;
  ModelConfig c = mc;
  c.n_layer = 1;
  c.n_nextn = 0;
  c.moe.n_dense_lead = mc.IsMoeLayer(mc.n_layer) ? 0 : 1;  // as the loader read the block
  if (L.ix_k.rows > 0) {
    c.mla.index_full.assign(1, true);  // the block runs its own indexer
  } else {
    c.mla.index_heads = 0;  // dense attention over the block's cache
    c.mla.index_full.clear();
  }
  return NextnBlock(model, std::move(c));
}

void NextnBlock::Products(const MatMulOut* outs, int n, const float* x, int64_t n_tok, ThreadPool& pool,
                          NextnScratch& s) const {
  if (model_->options().precise_matmul)
    MatMulPreciseMany(outs, n, x, n_tok, pool);
  else
    MatMulMany(outs, n, x, n_tok, pool, s.mm_);
}

// x = eh_proj [enorm(embed(t)) | hnorm(h)], and each token's cos/sin.
void NextnBlock::Input(std::span<const BatchSeq> batch, const float* hidden, int64_t n_tok, ThreadPool& pool,
                       NextnScratch& s) const {
  const ModelConfig& c = config_;
  const NextnWeights& n = model_->weights().nextn[0];
  const WeightMatrix& embd = model_->weights().token_embd;
  const int64_t D = c.n_embd, R2 = c.mla.rope / 2;
  FillTokenTables(batch, s.tok_seq_.data(), s.tok_pos_.data(), s.tok_id_.data());
  pool.ParallelFor(n_tok, [&](int64_t r) {
    float* e = &s.cat_[r * 2 * D];
    const auto* row = static_cast<const uint8_t*>(embd.data) + s.tok_id_[r] * embd.row_bytes;
    (void)DequantizeRow(embd.type, row, &s.x_[r * D], D);
    RmsNorm(&s.x_[r * D], n.enorm, e, D, c.rms_eps);
    RmsNorm(hidden + r * D, n.hnorm, e + D, D, c.rms_eps);
    MlaCosSin(c.mla, s.tok_pos_[r], &s.cos_[r * R2], &s.sin_[r * R2]);
  });
  const MatMulOut eh{&n.eh_proj, s.x_.data(), D};
  Products(&eh, 1, s.cat_.data(), n_tok, pool, s);
}

void NextnBlock::Ffn(int64_t n_tok, ThreadPool& pool, NextnScratch& s) const {
  const ModelConfig& c = config_;
  const LayerWeights& L = model_->weights().nextn[0].block;
  const int64_t D = c.n_embd;
  const bool precise = model_->options().precise_matmul;
  pool.ParallelFor(n_tok, [&](int64_t t) { RmsNorm(&s.x_[t * D], L.ffn_norm, &s.h_[t * D], D, c.rms_eps); });
  if (c.IsMoeLayer(0))
    MoeFfn(c, L, s.h_.data(), n_tok, s.ffn_out_.data(), pool, s.moe_, s.mm_, precise);
  else
    SwiGluFfn(L.gate, L.up, L.down, s.h_.data(), n_tok, s.gate_.data(), s.up_.data(), s.ffn_out_.data(), pool, s.mm_,
              precise);
  pool.ParallelFor(n_tok, [&](int64_t t) { AddInPlace(&s.x_[t * D], &s.ffn_out_[t * D], D); });
}

Status NextnBlock::Forward(std::span<const BatchSeq> batch, const float* hidden, const KvPages& kv, ThreadPool& pool,
                           NextnScratch& s, float* logits, float* out_hidden) const {
  const ModelConfig& c = config_;
  PG_ASSIGN_OR_RETURN(const BatchTotals n, CheckForwardBatch(batch, kv.page_tokens(), c.n_vocab, "nextn forward"));
  const int64_t n_tok = n.n_tok, n_logits = n.n_logits;
  if (n_tok == 0) return Status::Ok();
  if (kv.layout.n_layers != 1) return InvalidArgument("nextn forward: KV pages are not the block's one-layer layout");
  PG_RETURN_IF_ERROR(CheckKvPagesFor(c, kv, "nextn forward"));
  s.Reserve(c, n_tok, n_logits, n.max_ctx, pool.size());
  Input(batch, hidden, n_tok, pool, s);
  const MlaStep step = MakeMlaStep(batch, kv, n_tok, s.tok_seq_.data(), s.tok_pos_.data(), s.cos_.data(), s.sin_.data(),
                                   model_->options());
  MlaAttentionLayer(c, model_->weights().nextn[0].block, 0, step, s.x_.data(), s.h_.data(), pool, s.mla_, s.mm_);
  Ffn(n_tok, pool, s);
  const int64_t D = c.n_embd;
  if (out_hidden) std::copy(s.x_.begin(), s.x_.begin() + n_tok * D, out_hidden);
  if (n_logits == 0) return Status::Ok();
  const float* norm = model_->weights().nextn[0].shared_head_norm;
  if (!norm) norm = model_->weights().output_norm;  // optional in the file: the trunk's then
  int64_t li = 0, t_end = 0;
  for (const BatchSeq& b : batch) {
    t_end += b.n_tokens;
    for (int64_t t = t_end - b.logit_rows(); t < t_end; ++t, ++li)
      RmsNorm(&s.x_[t * D], norm, &s.last_[li * D], D, c.rms_eps);
  }
  const MatMulOut out{&model_->weights().output, logits, c.n_vocab};
  Products(&out, 1, s.last_.data(), n_logits, pool, s);
  return Status::Ok();
}

}  // namespace pg
