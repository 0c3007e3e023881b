#include "model/hf_tensor_names.h"

#include <cstring>

namespace pg {
namespace {

// The layer's attention and norm tensors.
void AddAttention(const ModelConfig& c, int64_t l, std::vector<HfTensorName>* out) {
  const std::string b = "blk." + std::to_string(l) + ".", h = "model.layers." + std::to_string(l) + ".";
  const int64_t D = c.n_embd, Q = c.q_dim(), KV = c.kv_dim();
  const bool llama = c.arch == "llama", glm = c.arch == "glm4moe";
  const int64_t qh = llama ? c.n_head : 0, kh = llama ? c.n_head_kv : 0;
  out->push_back({b + "attn_norm.weight", {h + "input_layernorm.weight"}, {D}});
  out->push_back({b + "attn_q.weight", {h + "self_attn.q_proj.weight"}, {Q, D}, false, qh, true});
  out->push_back({b + "attn_k.weight", {h + "self_attn.k_proj.weight"}, {KV, D}, false, kh, true});
  out->push_back({b + "attn_v.weight", {h + "self_attn.v_proj.weight"}, {KV, D}, false, 0, true});
  out->push_back({b + "attn_output.weight", {h + "self_attn.o_proj.weight"}, {D, Q}, false, 0, true});
  const bool bias_optional = !c.qkv_bias;
  out->push_back({b + "attn_q.bias", {h + "self_attn.q_proj.bias"}, {Q}, bias_optional, qh});
  out->push_back({b + "attn_k.bias", {h + "self_attn.k_proj.bias"}, {KV}, bias_optional, kh});
  out->push_back({b + "attn_v.bias", {h + "self_attn.v_proj.bias"}, {KV}, bias_optional});
  if (c.qk_norm || glm) {
    out->push_back({b + "attn_q_norm.weight", {h + "self_attn.q_norm.weight"}, {c.head_dim}, !c.qk_norm});
    out->push_back({b + "attn_k_norm.weight", {h + "self_attn.k_norm.weight"}, {c.head_dim}, !c.qk_norm});
  }
  out->push_back(
      {b + (glm ? "post_attention_norm.weight" : "ffn_norm.weight"), {h + "post_attention_layernorm.weight"}, {D}});
}

void AddFfn(const ModelConfig& c, int64_t l, std::vector<HfTensorName>* out) {
  const std::string b = "blk." + std::to_string(l) + ".", h = "model.layers." + std::to_string(l) + ".mlp.";
  const int64_t D = c.n_embd;
  auto proj = [&](const std::string& g, const std::string& hf, int64_t F, std::vector<HfTensorName>* o) {
    o->push_back({b + "ffn_gate" + g + ".weight", {hf + "gate_proj.weight"}, {F, D}, false, 0, true});
    o->push_back({b + "ffn_up" + g + ".weight", {hf + "up_proj.weight"}, {F, D}, false, 0, true});
    o->push_back({b + "ffn_down" + g + ".weight", {hf + "down_proj.weight"}, {D, F}, false, 0, true});
  };
  if (!c.IsMoeLayer(l)) return proj("", h, c.n_ff, out);
  const int64_t E = c.moe.n_expert, F = c.moe.n_ff_exp;
  out->push_back({b + "ffn_gate_inp.weight", {h + "gate.weight"}, {E, D}});
  if (c.arch == "glm4moe") out->push_back({b + "exp_probs_b.bias", {h + "gate.e_score_correction_bias"}, {E}, true});
  std::vector<HfTensorName> one;
  proj("_exps", h + "experts.0.", F, &one);
  for (HfTensorName& t : one) {
    const std::string suffix = t.hf[0].substr((h + "experts.0.").size());
    t.hf.clear();
    for (int64_t e = 0; e < E; ++e) t.hf.push_back(h + "experts." + std::to_string(e) + "." + suffix);
    out->push_back(std::move(t));
  }
  if (c.moe.n_shared > 0) proj("_shexp", h + "shared_experts.", c.moe.n_shared * F, out);
}

}  // namespace

std::vector<HfTensorName> HfTensorNames(const ModelConfig& c) {
  std::vector<HfTensorName> out;
  out.push_back({"token_embd.weight", {"model.embed_tokens.weight"}, {c.n_vocab, c.n_embd}, false, 0, true});
  out.push_back({"output.weight", {"lm_head.weight"}, {c.n_vocab, c.n_embd}, c.tied_embeddings, 0, true});
  out.push_back({"output_norm.weight", {"model.norm.weight"}, {c.n_embd}});
  for (int64_t l = 0; l < c.n_layer; ++l) {
    AddAttention(c, l, &out);
    AddFfn(c, l, &out);
  }
  return out;
}

void HfRopeRows(const uint8_t* src, uint8_t* dst, int64_t n_heads, int64_t head_dim, size_t row_bytes, bool to_gguf) {
  const int64_t half = head_dim / 2;
  for (int64_t h = 0; h < n_heads; ++h)
    for (int64_t i = 0; i < 2; ++i)
      for (int64_t j = 0; j < half; ++j) {
        const int64_t hf = h * head_dim + i * half + j, gg = h * head_dim + 2 * j + i;
        const int64_t from = to_gguf ? hf : gg, to = to_gguf ? gg : hf;
        std::memcpy(dst + static_cast<size_t>(to) * row_bytes, src + static_cast<size_t>(from) * row_bytes, row_bytes);
      }
}

}  // namespace pg
