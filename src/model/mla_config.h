// MlaConfig: the multi-head latent attention (MLA) hyperparameters of the
// deepseek2 (DeepSeek-V2/V3/R1, Kimi-K2) and glm-dsa (GLM-5.x) archs, read
// from GGUF metadata as llama.cpp writes and reads it, with the RoPE/YaRN
// constants they imply and glm-dsa's DeepSeek sparse attention indexer.
//
// Per layer and token (x = the attention norm's output):
//   q   = q_b(RMSNorm(q_a x)) per head [nope | rope]     (no q LoRA: q = wq x)
//   kv  = kv_a_mqa x = [c (kv_lora) | k_pe (rope)];  c = RMSNorm(c) * kv_a_norm
//   the cache row = [c | RoPE(k_pe)] (kv_lora + rope elements, one "head")
//   attention (absorbed): per head q_abs = W_kb[h] q_nope, score =
//     (q_abs . c_s + RoPE(q_pe) . k_pe_s) * kq_scale, o = sum_s p_s c_s,
//     out_h = W_vb[h] o; then attn_output.
// RoPE is NORM (adjacent pairs) over the rope dims. YaRN (ggml rope_yarn):
//   theta_k = p * base^(-2k/n_rot) * (fs * (1 - ramp_k) + ramp_k), ramp from
//   the correction dims of beta_fast 32 / beta_slow 1 (llama.cpp's defaults),
//   cos/sin scaled by rope_mag; kq_scale = mscale^2 / sqrt(nope + rope) with
//   DeepSeek's log multiplier (../shared/tools/ref_forward.py states the same).
//
// The indexer (glm-dsa, on its "full" layers; a "shared" layer reuses the
// previous full layer's choice; attention.indexer.types):
//   iq = iq_b(qr) per indexer head [rope | nope]; ik = LayerNorm(ik x) *
//   k_norm + k_norm_b (eps 0, as llama.cpp: it never loads f_norm_eps for
//   glm-dsa), [rope | nope]; w = proj x / sqrt(index_dim * index_heads);
//   score(t, s) = sum_h w_h relu(iq_h . ik_s); query t attends to its top_k keys.
//
// Thread-safety: plain value type.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace pg {

class GgufFile;
struct ModelConfig;

struct MlaConfig {
  bool enabled = false;
  int64_t q_lora = 0;            // attention.q_lora_rank (0: deepseek2 "lite", q = wq x)
  int64_t kv_lora = 0;           // attention.kv_lora_rank
  int64_t nope = 0;              // per-head q/k part without rope: key_length_mla - rope
  int64_t rope = 0;              // rope.dimension_count (the shared roped key part)
  int64_t v_head = 0;            // attention.value_length_mla
  double kq_scale = 0;           // mscale^2 / sqrt(nope + rope)
  double rope_mag = 1;           // YaRN magnitude of cos/sin
  std::vector<double> inv_freq;  // (rope / 2) YaRN-corrected frequencies

  // DeepSeek sparse attention (glm-dsa). index_heads == 0: dense attention.
  int64_t index_heads = 0;       // attention.indexer.head_count
  int64_t index_dim = 0;         // attention.indexer.key_length
  int64_t index_top_k = 0;       // attention.indexer.top_k
  std::vector<bool> index_full;  // (n_layer) runs its own indexer (else reuses the previous full layer's)

  int64_t k_head() const { return nope + rope; }  // per-head q/k width
  int64_t row() const { return kv_lora + rope; }  // cached latent row
  bool sparse() const { return index_heads > 0; }
  // Layers with an indexer key cache, and layer l's slot among them (-1: none).
  int64_t n_index_layers() const;
  int64_t IndexSlot(int64_t layer) const;
};

// Whether `arch` is an MLA architecture (deepseek2, glm-dsa).
bool IsMlaArch(const std::string& arch);

// Reads the MLA keys of c->arch into c->mla, sets head_dim (the latent row),
// n_head_kv 1 and n_rot. Called by ModelConfig::FromGguf after the trunk's
// n_layer is known (NextN blocks excluded). One-line errors.
Status ReadMla(const GgufFile& f, ModelConfig* c);

}  // namespace pg
