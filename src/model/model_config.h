// ModelConfig: the hyperparameters of a decoder-only transformer, read from
// GGUF metadata ({arch}.* keys), for the architectures prosgrow runs:
//   llama  — rope NORM (adjacent pairs), optional llama3 rope scaling
//   qwen2  — rope NEOX (split halves), q/k/v projection bias
//   qwen3  — rope NEOX, RMSNorm on each q and k head before rope
//   qwen3moe — qwen3 attention; every layer a Mixture-of-Experts FFN with a
//            softmax router and renormalised top-k weights
//   glm4moe  — q/k/v bias, optional q/k norm, partial rope NEOX, leading dense
//            layers, then MoE with a sigmoid router, a selection bias, routed
//            scaling and a shared expert
//   deepseek2 — multi-head latent attention (MLA, mla_config.h), YaRN,
//            glm4moe's MoE plus group-limited routing
//   glm-dsa  — deepseek2's MLA plus the DeepSeek sparse attention indexer
// All use RMSNorm, SwiGLU FFNs, GQA and optionally tied embeddings.
// Thread-safety: plain value type.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/kv_layout.h"
#include "base/status.h"
#include "model/mla_config.h"

namespace pg {

class GgufFile;

enum class RopeStyle { kNorm, kNeox };

// How router logits become expert probabilities (llama.cpp's
// expert_gating_func: 1 softmax, 2 sigmoid).
enum class ExpertGating { kSoftmax, kSigmoid };

// The Mixture-of-Experts part of a config (n_expert == 0: a dense model).
struct MoeConfig {
  int64_t n_expert = 0;       // {arch}.expert_count
  int64_t n_expert_used = 0;  // {arch}.expert_used_count (top-k)
  int64_t n_ff_exp = 0;       // {arch}.expert_feed_forward_length: one expert's SwiGLU width
  int64_t n_dense_lead = 0;   // glm4moe leading_dense_block_count: layers [0, n) are dense
  int64_t n_shared = 0;       // glm4moe expert_shared_count (width n_shared * n_ff_exp)
  ExpertGating gating = ExpertGating::kSoftmax;
  bool norm_weights = false;  // divide the top-k weights by their sum
  float weights_scale = 0;    // multiply the weights by this (0 or 1: not at all)
  // Group-limited routing (deepseek2): the experts form n_group equal groups;
  // only the n_group_used groups with the largest top-2 score sums compete.
  int64_t n_group = 1;       // {arch}.expert_group_count (1: no grouping)
  int64_t n_group_used = 1;  // {arch}.expert_group_used_count
};

struct ModelConfig {
  std::string arch;  // "llama" | "qwen2" | "qwen3" | "qwen3moe" | "glm4moe" | "deepseek2" | "glm-dsa"
  std::string name;  // general.name
  int64_t n_vocab = 0;
  int64_t n_embd = 0;   // hidden size
  int64_t n_layer = 0;  // blocks run (glm4moe: without its nextn_predict_layers)
  int64_t n_head = 0;
  int64_t n_head_kv = 0;
  int64_t head_dim = 0;     // per head, for q and k (= v here); MLA: the cached latent row
  int64_t n_nextn = 0;      // NextN (MTP) blocks stored after the n_layer trunk blocks
  int64_t n_ff = 0;         // dense FFN inner size (0 when no layer is dense)
  int64_t n_ctx_train = 0;  // {arch}.context_length
  float rms_eps = 1e-6f;
  float rope_base = 10000.0f;
  int64_t n_rot = 0;  // rotated dims per head (<= head_dim)
  RopeStyle rope_style = RopeStyle::kNorm;
  bool qkv_bias = false;  // qwen2 (required); glm4moe loads them when present
  bool qk_norm = false;   // qwen3, qwen3moe (required); glm4moe loads them when present
  bool tied_embeddings = false;
  MoeConfig moe;
  MlaConfig mla;  // deepseek2, glm-dsa (mla.enabled)

  bool is_moe() const { return moe.n_expert > 0; }
  // Whether layer l's FFN is the routed experts (else a dense SwiGLU).
  bool IsMoeLayer(int64_t l) const { return is_moe() && l >= moe.n_dense_lead; }

  // llama3 rope scaling ({arch}.rope.scaling.* or a rope_freqs tensor).
  float rope_scale_factor = 0;  // 0 = none
  float rope_low_freq_factor = 1;
  float rope_high_freq_factor = 4;
  int64_t rope_orig_ctx = 8192;

  int64_t q_dim() const { return n_head * head_dim; }
  int64_t kv_dim() const { return n_head_kv * head_dim; }
  // How attention caches a token: K and V per kv head, or one MLA latent row
  // (kv_lora + rope) plus the indexer key of each indexer layer.
  AttentionKind attention_kind() const { return mla.enabled ? AttentionKind::kMla : AttentionKind::kMha; }
  // The KV block layout of this model (base/kv_layout.h).
  KvLayout KvLayoutFor(int64_t page_tokens, KvDtype dtype) const;
  // The KV element type: bf16 when asked (--kv-bf16), f32 for MLA latent
  // rows under exact attention (--attn precise), f16 otherwise.
  KvDtype KvDtypeFor(bool kv_bf16, bool precise) const {
    return kv_bf16 ? KvDtype::kBF16 : mla.enabled && precise ? KvDtype::kF32 : KvDtype::kF16;
  }

  // Validates the metadata and derives defaults; one-line errors.
  static Result<ModelConfig> FromGguf(const GgufFile& file);
  std::string Summary() const;
};

}  // namespace pg
