// Model: a loaded model (GGUF or Hugging Face, model_source.h) and its forward pass on the CPU backend.
//
// Forward() runs one step over a batch of sequences, each contributing a
// chunk of new tokens (a prefill chunk, or one token when decoding). All the
// batch's tokens go through every matrix multiply together; attention reads
// each sequence's earlier K/V from its pages (kv_pages.h) and writes the new
// tokens' K/V there first. Logits come out only for sequences that ask.
//
// Thread-safety: Load() once; Forward() may run concurrently only with
// distinct ForwardScratch objects and disjoint KV blocks (the engine runs one
// forward at a time).
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "backend/cpu/matmul.h"
#include "base/status.h"
#include "base/thread_pool.h"
#include "gguf/gguf_file.h"
#include "model/attention.h"
#include "model/kv_pages.h"
#include "model/mla_layer.h"
#include "model/model_config.h"
#include "model/model_source.h"
#include "model/model_weights.h"
#include "model/moe_ffn.h"

namespace pg {

// One sequence's share of a forward step.
struct BatchSeq {
  const int32_t* tokens = nullptr;  // (n_tokens) new tokens
  int64_t n_tokens = 0;
  int64_t start_pos = 0;                 // position of tokens[0]; K/V of [0, start_pos) are in the pages
  const int32_t* block_table = nullptr;  // (n_blocks) block ids covering [0, start_pos + n_tokens)
  int64_t n_blocks = 0;
  bool want_logits = false;  // logits of the last new token
  // Logits of every new token, in order (speculative verification: row i
  // scores the token after tokens[i]). Each row's arithmetic is the one it
  // would have as a one-token entry; the rows share their K/V reads.
  bool all_logits = false;
  int64_t logit_rows() const { return all_logits ? n_tokens : (want_logits ? 1 : 0); }
};

// How a Model runs (not part of the file).
struct ModelOptions {
  AttentionMode attention = AttentionMode::kTiledF32;  // f16-KV attention arithmetic (attention.h)
  // Repack matrices at load (backend/cpu/repack.h): Q8_0 (and Q5_0,
  // losslessly widened) into Q8_0x8 (~2x faster GEMV; int32 block sums
  // instead of llama.cpp's per-lane float partial sums); where the kernel
  // table asks, Q4_K/Q5_K/Q6_K into Q4_Kx8/Q5_Kx8/Q6_Kx8 and F16/BF16 into
  // Half4 (same bits). Off keeps llama.cpp's row-major arithmetic (--attn llama).
  bool repack_weights = true;
  // Matrix products on unquantized f32 activations (MatMulPrecise): logits
  // ~40x closer to exact arithmetic on quantized models, slower
  // (docs/quality.md). Needs row-major weights (repack_weights off).
  bool precise_matmul = false;
  // MLA models with the DSA indexer: attend to only the top-k keys, or score
  // every key and mask the rest (`--attn-sparse dense-masked`; same bits).
  SparseAttention sparse_attention = SparseAttention::kSparse;
};

// The options of each arithmetic: `fast` repacks, `llama` keeps llama.cpp's
// Q8_0 dot-product order as well as its attention, `precise` is `fast`'s
// attention with MatMulPrecise products on the file's row-major weights.
inline ModelOptions ModelOptionsFor(AttentionMode mode) {
  if (mode == AttentionMode::kPrecise) return ModelOptions{AttentionMode::kTiledF32, false, true};
  return ModelOptions{mode, mode == AttentionMode::kTiledF32, false};
}

// Per-caller buffers of the forward pass; grown on demand, so a steady-state
// step allocates nothing once the largest batch has been seen.
class ForwardScratch {
 public:
  ForwardScratch() = default;
  // MoE: (layer, expert) SwiGLUs run by the passes on this scratch so far.
  uint64_t experts_run() const { return moe_.experts_run(); }
  // The last Forward's final residual stream (before output_norm): n_embd
  // floats per new token, in batch order (the NextN drafter's input).
  const float* residual() const { return x_.data(); }

 private:
  friend class Model;
  void Reserve(const ModelConfig& c, int64_t n_tokens, int64_t n_logits, int64_t max_ctx, int n_threads);

  int64_t cap_tokens_ = 0, cap_logits_ = 0, cap_ctx_ = 0;
  int cap_threads_ = 0;
  size_t scores_stride_ = 0;    // floats of scores_ per thread
  std::vector<float> x_;        // (T, n_embd) residual stream
  std::vector<float> h_;        // (T, n_embd) normed input
  std::vector<float> q_;        // (T, q_dim)
  std::vector<float> k_;        // (T, kv_dim)
  std::vector<float> v_;        // (T, kv_dim)
  std::vector<float> attn_;     // (T, q_dim) attention output
  std::vector<float> gate_;     // (T, n_ff) dense FFN hidden
  std::vector<float> up_;       // (T, n_ff)
  std::vector<float> ffn_out_;  // (T, n_embd) FFN output before the residual add
  std::vector<float> cos_;      // (T, n_rot/2)
  std::vector<float> sin_;      // (T, n_rot/2)
  std::vector<float> scores_;   // (n_threads, scores_stride_) attention scratch
  struct AttnTask {             // one AttendGroup call: rows x heads of one kv head
    int64_t t0, n_rows;         // token rows [t0, t0 + n_rows) of one sequence
    int64_t h0, n_heads;        // query heads [h0, h0 + n_heads) of kv head h0 / group
    int64_t cost;               // keys x queries, for largest-first ordering
  };
  std::vector<AttnTask> attn_tasks_;
  std::vector<float> last_;       // (n_logits, n_embd) rows that produce logits
  std::vector<int32_t> tok_seq_;  // (T) batch index of each token
  std::vector<int64_t> tok_pos_;  // (T) position of each token
  std::vector<int32_t> tok_id_;   // (T)
  MatMulScratch mm_;
  MoeScratch moe_;
  MlaScratch mla_;  // MLA models only
};

class Model {
 public:
  // `path`: a GGUF file, or a Hugging Face model directory (OpenModelSource).
  static Result<std::unique_ptr<Model>> Load(const std::string& path, const ModelOptions& options = {});
  // The same from a source already opened (serve opens and checks it once,
  // for its preflight and the engine); the model shares it.
  static Result<std::unique_ptr<Model>> Load(std::shared_ptr<const ModelSource> source,
                                             const ModelOptions& options = {});
  static Result<std::unique_ptr<Model>> Load(std::shared_ptr<const GgufFile> file, const ModelOptions& options = {});

  const ModelConfig& config() const { return config_; }
  const ModelOptions& options() const { return options_; }
  // Where the weights, tokenizer and chat template come from.
  const ModelSource& source() const { return *source_; }
  const ModelWeights& weights() const { return *weights_; }
  // Stable identity of the weights (for KV cache keys): hash of the file's
  // metadata, tensor layout and types, and for other formats than GGUF the
  // format's name, plus its size, with suffixes for attention
  // modes other than kLlamaF16 and for repacked weights (the K/V of later
  // layers depend on both), and the attention kind (MLA caches latent rows
  // and indexer keys, not K/V).
  const std::string& identity() const { return identity_; }
  // The KV element type this model's arithmetic is meant for: f32 for MLA
  // models with precise products (the latent rows unrounded), else f16.
  KvDtype kv_dtype() const { return config_.KvDtypeFor(false, options_.precise_matmul); }

  // Runs the batch. logits receives each entry's logit_rows() rows of
  // n_vocab floats, in batch order. Errors: tokens outside the vocabulary,
  // block tables too short for the positions.
  Status Forward(std::span<const BatchSeq> batch, const KvPages& kv, ThreadPool& pool, ForwardScratch& s,
                 float* logits) const;

 private:
  Model() = default;
  // The stages of Forward, in order.
  // Token bookkeeping (tok_seq_/tok_pos_/tok_id_), embeddings into x_, RoPE tables.
  void Embed(std::span<const BatchSeq> batch, int64_t n_tok, ThreadPool& pool, ForwardScratch& s) const;
  // x_ += attention(norm(x_)); the new tokens' K/V go into their page slots.
  void AttentionBlock(int64_t layer, std::span<const BatchSeq> batch, const KvPages& kv, int64_t n_tok,
                      ThreadPool& pool, ForwardScratch& s) const;
  // Token t's q/k/v after the projections: biases, q/k norms, RoPE; stores its K/V.
  void FinishQkvRow(int64_t layer, std::span<const BatchSeq> batch, const KvPages& kv, int64_t t,
                    ForwardScratch& s) const;
  void Rope(float* x, int64_t n_heads, int64_t t, const ForwardScratch& s) const;
  // x_ += ffn(norm(x_)), dense SwiGLU or MoE.
  void FfnBlock(int64_t layer, int64_t n_tok, ThreadPool& pool, ForwardScratch& s) const;
  // Final norm and output projection, only for the rows that want logits.
  void OutputLogits(std::span<const BatchSeq> batch, int64_t n_logits, ThreadPool& pool, ForwardScratch& s,
                    float* logits) const;
  void AttentionPerHead(int64_t layer, std::span<const BatchSeq> batch, const KvPages& kv, int64_t n_tok,
                        ThreadPool& pool, ForwardScratch& s) const;
  void AttentionGrouped(int64_t layer, std::span<const BatchSeq> batch, const KvPages& kv, int64_t n_tok,
                        ThreadPool& pool, ForwardScratch& s) const;
  void Attention(int64_t layer, std::span<const BatchSeq> batch, const KvPages& kv, int64_t n_tok, ThreadPool& pool,
                 ForwardScratch& s) const;
  // MatMulMany, or MatMulPreciseMany with options_.precise_matmul.
  void Products(const MatMulOut* outs, int n_outs, const float* x, int64_t n_tok, ThreadPool& pool,
                ForwardScratch& s) const;

  std::shared_ptr<const ModelSource> source_;
  ModelConfig config_;
  ModelOptions options_;
  std::unique_ptr<ModelWeights> weights_;
  std::vector<float> inv_freq_;  // (n_rot/2)
  std::string identity_;
};

// What every forward pass over the model's layers (Model::Forward, NextnBlock::Forward) does alike.
// The batch's totals: new tokens, logit rows and the longest context.
struct BatchTotals {
  int64_t n_tok = 0, n_logits = 0, max_ctx = 0;
};
// Checks every entry of `batch` against pages of `page_tokens` and a vocabulary of `n_vocab`;
// errors begin with `who` ("forward").
Result<BatchTotals> CheckForwardBatch(std::span<const BatchSeq> batch, int64_t page_tokens, int64_t n_vocab,
                                      std::string_view who);
// The KV pages' row size, attention kind and indexer keys are those of `c`.
Status CheckKvPagesFor(const ModelConfig& c, const KvPages& kv, std::string_view who);
// Each new token's batch entry, position and id, in batch order.
void FillTokenTables(std::span<const BatchSeq> batch, int32_t* tok_seq, int64_t* tok_pos, int32_t* tok_id);
// The MLA layer's step: the pass's token tables (tok_seq, tok_pos, cos, sin) and the model's options.
MlaStep MakeMlaStep(std::span<const BatchSeq> batch, const KvPages& kv, int64_t n_tok, const int32_t* tok_seq,
                    const int64_t* tok_pos, const float* cos, const float* sin, const ModelOptions& o);

}  // namespace pg
