// MlaAttentionLayer: one MLA layer's attention block (deepseek2, glm-dsa)
// over a forward step's tokens, with the DeepSeek sparse attention indexer
// where the model has one (mla_config.h states the math):
//
//   1. h = RMSNorm(x); q_a (or q), kv_a, and on indexer layers the indexer
//      key and head weights, as one batched product of h;
//   2. per token: the latent row [RMSNorm(c) | RoPE(k_pe)] and the indexer
//      key [RoPE | rest] of LayerNorm(ik) go into the token's KV slot (the
//      latent rows and the indexer keys share the block: base/kv_layout.h);
//   3. q = q_b(RMSNorm(q_a)) and the indexer queries iq_b(...) (one product);
//      RoPE on q_pe and iq; q_abs = W_kb[h] q_nope per head (k_b and v_b are
//      repacked like expert stacks; a step of <= kHeadGroupTokens tokens runs
//      every head as one grouped product, a longer one a product per head);
//   4. the indexer's top-k per token (dsa_indexer.h, topk_select.h) on its
//      full layers; shared layers reuse the last full layer's choice;
//   5. MlaAttend per token (mla_attention.h): only the chosen latent rows
//      (kSparse) or every key with the others masked (kDenseMasked);
//   6. out_h = W_vb[h] o_h per head, then attn_output; x += out.
// Every stage is per token or per row, so a token's bytes in the cache and
// its outputs never depend on the batch or chunking.
//
// Thread-safety: MlaScratch belongs to one forward pass at a time.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "backend/cpu/matmul.h"
#include "base/thread_pool.h"
#include "model/kv_pages.h"
#include "model/model_config.h"
#include "model/model_weights.h"

namespace pg {

struct BatchSeq;

// How MLA attention visits the keys past the indexer's top-k.
enum class SparseAttention {
  kSparse,       // read only the top-k latent rows (the default)
  kDenseMasked,  // score every causal key, mask the unselected (for checking; same bits)
};

// cos/sin (rope/2 each) of position `pos` with YaRN's frequencies and magnitude.
void MlaCosSin(const MlaConfig& m, int64_t pos, float* cos_out, float* sin_out);

// ggml_norm with eps 0 (llama.cpp's glm-dsa never loads f_norm_eps), in place
// over x[0..n): mean and variance in double. The DSA indexer keys' norm.
void LayerNormNoEps(float* x, int64_t n);

// Up to this many tokens a step runs the per-head k_b and v_b products as one
// grouped product (one parallel region for all heads); past it, one product per head.
inline constexpr int64_t kHeadGroupTokens = 16;

class MlaScratch {
 public:
  void Reserve(const ModelConfig& c, int64_t n_tokens, int64_t max_ctx, int n_threads);

 private:
  friend class MlaLayerRun;
  int64_t cap_tokens_ = 0, cap_ctx_ = 0;
  int cap_threads_ = 0;
  size_t thread_stride_ = 0;
  std::vector<float> qa_;             // (T, q_lora)
  std::vector<float> q_;              // (T, H * k_head)
  std::vector<float> kv_;             // (T, kv_lora + rope)
  std::vector<float> qabs_;           // (T, H * (kv_lora + rope))
  std::vector<float> o_;              // (T, H * kv_lora)
  std::vector<float> av_;             // (T, H * v_head)
  std::vector<float> ik_;             // (T, index_dim)
  std::vector<float> iw_;             // (T, index_heads)
  std::vector<float> iq_;             // (T, index_heads * index_dim)
  std::vector<float> xh_;             // (kHeadGroupTokens * H, max(nope, kv_lora)) per-head inputs, by head
  std::vector<float> yh_;             // (kHeadGroupTokens * H, max(kv_lora, v_head)) per-head outputs, by head
  std::vector<WeightMatrix> head_w_;  // (H) one head's k_b or v_b
  std::vector<MatMulGroup> head_g_;   // (H)
  std::vector<int32_t> sel_;          // (T, top_k) chosen positions, ascending
  std::vector<int64_t> sel_n_;
  std::vector<float> thread_f_;    // (threads, thread_stride_) attention / indexer scratch
  std::vector<int32_t> thread_i_;  // (threads, max_ctx) top-k scratch
  std::vector<uint8_t> thread_m_;  // (threads, max_ctx) dense-masked mask
};

// What the layer needs of the forward step.
struct MlaStep {
  std::span<const BatchSeq> batch;
  const KvPages* kv = nullptr;
  int64_t n_tok = 0;
  const int32_t* tok_seq = nullptr;  // (T) batch entry of each token
  const int64_t* tok_pos = nullptr;  // (T)
  const float* cos = nullptr;        // (T, rope/2) MlaCosSin
  const float* sin = nullptr;
  bool precise = false;  // MatMulPrecise products
  SparseAttention sparse = SparseAttention::kSparse;
};

// x (T, n_embd) += attention of layer `layer`; h (T, n_embd) is scratch.
void MlaAttentionLayer(const ModelConfig& c, const LayerWeights& L, int64_t layer, const MlaStep& step, float* x,
                       float* h, ThreadPool& pool, MlaScratch& s, MatMulScratch& mm);

}  // namespace pg
