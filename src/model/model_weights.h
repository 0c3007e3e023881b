// ModelWeights: views of a model source's tensors (model_source.h) arranged per layer. Matrices
// stay in the file's mapping (any supported type), unless repacked at load
// (then the repacked copies are owned here; token_embd, read by row for the
// embedding lookup, always stays in the mapping); small vectors (norms,
// biases) are converted to f32 and owned here. Expert stacks of MoE layers
// are repacked too (each stack as one matrix, so every expert is read as
// densely as a dense matrix); without repacking they stay mapped and only the
// experts a token is routed to are paged in.
// Thread-safety: immutable after Load(); shared by all forward passes.
#pragma once

#include <memory>
#include <vector>

#include "backend/cpu/matmul.h"
#include "backend/cpu/repack.h"
#include "base/status.h"
#include "model/model_config.h"

namespace pg {

class ModelSource;

// One projection of all the experts of a layer: a 3-D GGUF tensor with
// ne = [cols, rows, n_expert], in the file's mapping or repacked (then all
// n_expert * rows rows as one matrix of first.layout, repack.h). Expert e's
// (rows, cols) matrix is the contiguous slice at data + e * expert_bytes:
//
//   data -> | expert 0: rows x row_bytes | expert 1 | ... | expert n-1 |
//           (repacked: expert 0's rows / 8 row groups | expert 1's | ...)
struct ExpertStack {
  WeightMatrix first;       // expert 0's view; the others differ only in data
  size_t expert_bytes = 0;  // GroupOffset(first, first.rows): rows * row_bytes when row-major
  int64_t n_expert = 0;

  WeightMatrix Expert(int64_t e) const {
    WeightMatrix m = first;
    m.data = static_cast<const uint8_t*>(first.data) + static_cast<size_t>(e) * expert_bytes;
    return m;
  }
};

struct LayerWeights {
  const float* attn_norm = nullptr;  // (n_embd)
  WeightMatrix wq;                   // (q_dim, n_embd)
  WeightMatrix wk;                   // (kv_dim, n_embd)
  WeightMatrix wv;                   // (kv_dim, n_embd)
  WeightMatrix wo;                   // (n_embd, q_dim)
  const float* bq = nullptr;         // (q_dim)  qwen2, glm4moe; else null
  const float* bk = nullptr;         // (kv_dim) idem
  const float* bv = nullptr;         // (kv_dim) idem
  const float* q_norm = nullptr;     // (head_dim) qwen3, qwen3moe, optional in glm4moe
  const float* k_norm = nullptr;     // (head_dim) idem
  const float* ffn_norm = nullptr;   // (n_embd) glm4moe: post_attention_norm
  // Dense layers (rows == 0 in MoE layers):
  WeightMatrix gate;  // (n_ff, n_embd)
  WeightMatrix up;    // (n_ff, n_embd)
  WeightMatrix down;  // (n_embd, n_ff)
  // MoE layers (ModelConfig::IsMoeLayer):
  WeightMatrix router;                 // (n_expert, n_embd) ffn_gate_inp
  const float* router_bias = nullptr;  // (n_expert) glm4moe exp_probs_b: expert choice only
  ExpertStack gate_exps;               // n_expert x (n_ff_exp, n_embd)
  ExpertStack up_exps;                 // n_expert x (n_ff_exp, n_embd)
  ExpertStack down_exps;               // n_expert x (n_embd, n_ff_exp)
  WeightMatrix gate_shexp;             // (n_shared * n_ff_exp, n_embd) glm4moe; rows == 0 if none
  WeightMatrix up_shexp;               // (n_shared * n_ff_exp, n_embd)
  WeightMatrix down_shexp;             // (n_embd, n_shared * n_ff_exp)
  // MLA layers (deepseek2, glm-dsa; mla_config.h). wq then holds attn_q
  // (n_head * k_head, n_embd) when there is no q LoRA, wo is attn_output
  // (n_embd, n_head * v_head); wk, wv stay empty.
  WeightMatrix wq_a;                 // (q_lora, n_embd)
  const float* q_a_norm = nullptr;   // (q_lora)
  WeightMatrix wq_b;                 // (n_head * k_head, q_lora), each head [nope | rope]
  WeightMatrix wkv_a;                // (kv_lora + rope, n_embd) attn_kv_a_mqa, latent first
  const float* kv_a_norm = nullptr;  // (kv_lora)
  ExpertStack wk_b;                  // n_head x (kv_lora, nope) attn_k_b: q_abs = W_kb[h] q_nope
  ExpertStack wv_b;                  // n_head x (v_head, kv_lora) attn_v_b: out_h = W_vb[h] o_h
  // The DSA lightning indexer (glm-dsa full layers; rows == 0 elsewhere).
  WeightMatrix ix_q_b;                 // (index_heads * index_dim, q_lora), each head [rope | nope]
  WeightMatrix ix_k;                   // (index_dim, n_embd)
  const float* ix_k_norm = nullptr;    // (index_dim) LayerNorm weight
  const float* ix_k_norm_b = nullptr;  // (index_dim) LayerNorm bias
  WeightMatrix ix_proj;                // (index_heads, n_embd) per-head weights
};

// A NextN (multi-token prediction) block, stored after the trunk: a full
// layer plus the projection of [enorm(embedding) | hnorm(hidden)]. Loaded (and
// repacked like the trunk), run by the MTP drafter (model/nextn_block.h) only.
struct NextnWeights {
  LayerWeights block;
  WeightMatrix eh_proj;                     // (n_embd, 2 * n_embd)
  const float* enorm = nullptr;             // (n_embd)
  const float* hnorm = nullptr;             // (n_embd)
  const float* shared_head_norm = nullptr;  // (n_embd)
};

struct ModelWeights {
  WeightMatrix token_embd;             // (n_vocab, n_embd)
  WeightMatrix output;                 // (n_vocab, n_embd); = token_embd when tied
  const float* output_norm = nullptr;  // (n_embd)
  const float* rope_freqs = nullptr;   // (n_rot/2) optional llama3 factors
  std::vector<LayerWeights> layers;
  std::vector<NextnWeights> nextn;  // (config.n_nextn)

  // Validates every tensor's presence, type and shape against the config.
  // With `repack`, the matrices MatMul reads (not token_embd; expert stacks
  // whose rows are a multiple of 8) that have a repacked layout are copied
  // into it (RepackedWeights::AddAll, for the active kernel table) and their
  // pages of the file mapping released.
  static Result<std::unique_ptr<ModelWeights>> Load(const ModelSource& source, const ModelConfig& config,
                                                    bool repack = false);

  // The RoPE inverse frequencies (n_rot / 2) of `config` (its base, and
  // llama3 scaling where rope_scale_factor > 0), with rope_freqs if present.
  std::vector<float> InvFreq(const ModelConfig& config) const;

  // Bytes of repacked copies (0 without repacking).
  size_t repacked_bytes() const { return repacked_.bytes(); }

 private:
  friend class WeightLoader;
  std::vector<std::vector<float>> owned_;  // f32 copies of small vectors
  RepackedWeights repacked_;
};

}  // namespace pg
