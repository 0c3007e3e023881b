// NextnBlock: the forward pass of a model's NextN block (deepseek2 / glm-dsa
// nextn_predict_layers: DeepSeek-V3's and GLM-5's multi-token prediction
// module), the drafter of --spec mtp (engine/speculative/mtp_drafter.h).
//
// Block position p pairs the trunk's final hidden state h_p (the residual
// stream after the last trunk layer, before output_norm) with the token
// t_{p+1} that followed it, and predicts t_{p+2}:
//
//   x      = eh_proj [RMSNorm(embed(t_{p+1})) * enorm | RMSNorm(h_p) * hnorm]
//   x     += MLA attention of the block at position p, over the block's own
//            one-layer latent cache (and its own indexer where the block has
//            indexer tensors, as GLM-5's does; else dense attention)
//   x     += the block's FFN (MoE with the shared expert, or dense)
//   logits = output(RMSNorm(x) * shared_head_norm)
//
// The model's output matrix is the head (GGUF NextN blocks carry no head of
// their own). To draft further ahead, x (before shared_head_norm) stands in
// for h_{p+1}. The stages are the trunk's own (MlaAttentionLayer, MoeFfn,
// SwiGluFfn), on a one-layer config, so the block keeps the forward pass's
// batch invariance: a row's bits never depend on the rest of the batch.
//
// Thread-safety: immutable after Of(); Forward may run concurrently with
// distinct scratch objects and disjoint KV blocks.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "model/model.h"

namespace pg {

class NextnScratch {
 public:
  NextnScratch() = default;

 private:
  friend class NextnBlock;
  void Reserve(const ModelConfig& c, int64_t n_tokens, int64_t n_logits, int64_t max_ctx, int n_threads);
  int64_t cap_tokens_ = 0, cap_logits_ = 0;
  std::vector<float> x_;        // (T, n_embd)
  std::vector<float> h_;        // (T, n_embd)
  std::vector<float> cat_;      // (T, 2 n_embd) [enorm(e) | hnorm(h)]
  std::vector<float> gate_;     // (T, n_ff)
  std::vector<float> up_;       // (T, n_ff)
  std::vector<float> ffn_out_;  // (T, n_embd)
  std::vector<float> cos_;      // (T, rope/2)
  std::vector<float> sin_;      // (T, rope/2)
  std::vector<int32_t> tok_seq_;
  std::vector<int64_t> tok_pos_;
  std::vector<int32_t> tok_id_;
  std::vector<float> last_;  // (n_logits, n_embd)
  MatMulScratch mm_;
  MoeScratch moe_;
  MlaScratch mla_;
};

class NextnBlock {
 public:
  // The first NextN block of `model`. InvalidArgument (one line) when the
  // model has none. The model outlives the block.
  static Result<NextnBlock> Of(const Model& model);

  // The block as a one-layer model: its KV layout is config().KvLayoutFor.
  const ModelConfig& config() const { return config_; }

  // Runs the batch: entry b's tokens are t_{p+1} for positions p =
  // b.start_pos + i; hidden (T, n_embd) holds h_p of every token in batch
  // order. logits receives each entry's logit_rows() rows; out_hidden (T,
  // n_embd, may be null) each token's x before shared_head_norm.
  Status Forward(std::span<const BatchSeq> batch, const float* hidden, const KvPages& kv, ThreadPool& pool,
                 NextnScratch& s, float* logits, float* out_hidden) const;

 private:
  NextnBlock(const Model& model, ModelConfig config) : model_(&model), config_(std::move(config)) {}
  void Input(std::span<const BatchSeq> batch, const float* hidden, int64_t n_tok, ThreadPool& pool,
             NextnScratch& s) const;
  void Ffn(int64_t n_tok, ThreadPool& pool, NextnScratch& s) const;
  void Products(const MatMulOut* outs, int n, const float* x, int64_t n_tok, ThreadPool& pool, NextnScratch& s) const;

  const Model* model_;
  ModelConfig config_;  // n_layer 1: the block
};

}  // namespace pg
