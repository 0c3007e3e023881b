// HfTensorNames: which Hugging Face checkpoint tensors make each tensor the
// model reads, per architecture. Used both ways: HfModelSource reads a
// checkpoint through it, and the HF exporter (synth/hf_export.h) writes one.
//
//   token_embd.weight        <- model.embed_tokens.weight
//   output.weight            <- lm_head.weight (absent: tied, tie_word_embeddings)
//   output_norm.weight       <- model.norm.weight
//   blk.N.attn_norm.weight   <- model.layers.N.input_layernorm.weight
//   blk.N.attn_{q,k,v,output}.weight <- model.layers.N.self_attn.{q,k,v,o}_proj.weight
//   blk.N.attn_{q,k,v}.bias  <- ...self_attn.{q,k,v}_proj.bias
//   blk.N.attn_{q,k}_norm.weight <- ...self_attn.{q,k}_norm.weight
//   blk.N.ffn_norm.weight    <- ...post_attention_layernorm.weight (glm4moe: post_attention_norm)
//   blk.N.ffn_{gate,up,down}.weight <- ...mlp.{gate,up,down}_proj.weight
//   blk.N.ffn_gate_inp.weight <- ...mlp.gate.weight (the router)
//   blk.N.exp_probs_b.bias   <- ...mlp.gate.e_score_correction_bias (glm4moe)
//   blk.N.ffn_{gate,up,down}_exps.weight <- ...mlp.experts.{0..E-1}.{gate,up,down}_proj.weight, stacked
//   blk.N.ffn_{gate,up,down}_shexp.weight <- ...mlp.shared_experts.{gate,up,down}_proj.weight (glm4moe)
//
// Layout: a safetensors [out, in] row-major matrix is GGUF's [in, out]
// (ne0 = in): the same bytes. llama's q/k rows are the exception: Hugging
// Face rotates each head's two halves (rotate_half), llama.cpp's converter
// reorders the rows so that rope pairs adjacent dims (RopeStyle::kNorm);
// HfRopeRows converts between the two orders, exactly (rows move, bits stay).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "model/model_config.h"

namespace pg {

struct HfTensorName {
  std::string gguf;             // the model's name
  std::vector<std::string> hf;  // one checkpoint tensor, or one per expert (stacked in order)
  std::vector<int64_t> shape;   // each checkpoint tensor's shape config.json implies, outermost first
  bool optional = false;        // may be absent (biases, norms an architecture may lack, lm_head when tied)
  int64_t rope_heads = 0;       // > 0: llama q/k, rows reordered per head of this many (HfRopeRows)
  // Checked against config.json's dtype (the matrices a checkpoint stores at
  // its precision); norms, biases and routers may be kept in f32.
  bool at_model_dtype = false;
};

// Every tensor the model may read for `c` (ModelConfig from config.json).
std::vector<HfTensorName> HfTensorNames(const ModelConfig& c);

// Reorders the rows of a q/k weight or bias ((n_heads * head_dim) rows of
// row_bytes each) between the Hugging Face order (to_gguf) and llama.cpp's
// (!to_gguf). src and dst must not overlap.
void HfRopeRows(const uint8_t* src, uint8_t* dst, int64_t n_heads, int64_t head_dim, size_t row_bytes, bool to_gguf);

}  // namespace pg
