#include "synth/mla_plan.h"

#include <cmath>
#include <string>
#include <utility>

#include "gguf/gguf_writer.h"

namespace pg {

namespace {

// What both mini MLA shapes keep: 5 trunk layers (1 dense lead) + 1 NextN
// block, 8 heads, dense FFN 1536, 256 experts top-8 of width 128 and 1 shared
// (routed scale 2.5), the latent 512 and the rope 64 of both originals; the
// named shape's hidden size, context, rope base, norm epsilon, q_lora, nope
// and v head dims.
ModelShape MiniMlaShape(std::string name, std::string arch, int64_t n_embd, int64_t context_length, float rope_theta,
                        float rms_eps, int64_t q_lora, int64_t nope, int64_t v_head) {
  ModelShape s{std::move(name), n_embd, 5, 8, 1, 576, 1536, context_length, false, rope_theta, rms_eps};
  s.n_expert = 256;
  s.n_expert_used = 8;
  s.n_ff_exp = 128;
  MlaShape& m = s.mla;
  m.arch = std::move(arch);
  m.q_lora = q_lora;
  m.kv_lora = 512;
  m.nope = nope;
  m.rope = 64;
  m.v_head = v_head;
  m.n_dense_lead = 1;
  m.n_shared = 1;
  m.nextn = 1;
  m.routed_scale = 2.5f;
  return s;
}

}  // namespace

ModelShape Glm5MiniShape() {
  // GLM-5 / 5.2 (GlmMoeDsaConfig: hidden 6144, 78 layers + 1 NextN, 64 heads,
  // q_lora 2048, kv_lora 512, rope 64, nope 192, v 256, dense FFN 12288 = 2 x
  // hidden, 256 experts of 2048, top-8, 1 shared, 3 leading dense layers,
  // routed scale 2.5, sigmoid, no expert groups, indexer 32 heads x 128 = 2 x
  // rope, top-k 2048, rope_theta 1e6, rms 1e-5, 202752 positions) scaled to
  // two cores: hidden 768 with 8 heads (hidden / heads 96, as 6144 / 64),
  // q_lora 256 (hidden / 3, as GLM-5), the latent and head dims, the indexer
  // and its top-k unchanged, dense FFN 1536 (2 x hidden), 256 experts top-8
  // of width 128 (hidden / 6: half GLM-5's ratio, to stay ~200 MB at Q4_K_M),
  // 5 trunk layers (1 dense lead) + 1 NextN block, and GLM-5.2's indexer
  // pattern (layers 0, 1, then one in four run their own: full, full, full,
  // shared, shared).
  ModelShape s = MiniMlaShape("glm5-mini", "glm-dsa", 768, 202752, 1000000.0f, 1e-5f, 256, 192, 256);
  s.mla.index_heads = 32;
  s.mla.index_dim = 128;
  s.mla.index_top_k = 2048;
  s.mla.index_full = {true, true, true, false, false};
  return s;
}

ModelShape DeepseekV3MiniShape() {
  // DeepSeek-V3 (config.json: hidden 7168, 61 layers + 1 NextN, 128 heads,
  // q_lora 1536, kv_lora 512, rope 64, nope 128, v 128, dense FFN 18432, 256
  // experts of 2048, top-8 in 8 groups keeping 4, 1 shared, 3 leading dense,
  // routed scale 2.5, sigmoid, YaRN x40 over 4096 positions with
  // mscale_all_dim 1, rope_theta 10000, rms 1e-6) scaled to two cores: hidden
  // 512 with 8 heads (64 per head; DeepSeek-V3: 56), q_lora 128 (hidden / 4;
  // DeepSeek-V3 / 4.7), the latent and head dims unchanged, dense FFN 1536 (3
  // x hidden; 2.6 x), 256 experts top-8 of width 128 (hidden / 4; / 3.5) in 8
  // groups keeping 4, YaRN as DeepSeek-V3, 5 trunk layers (1 dense lead) + 1
  // NextN block.
  ModelShape s = MiniMlaShape("deepseek-v3-mini", "deepseek2", 512, 163840, 10000.0f, 1e-6f, 128, 128, 128);
  s.mla.n_group = 8;
  s.mla.group_used = 4;
  s.mla.yarn_factor = 40.0f;
  s.mla.yarn_orig_ctx = 4096;
  s.mla.yarn_mscale_all_dim = 1.0f;
  return s;
}

namespace {

float InvSqrt(int64_t n) { return 1.0f / std::sqrt(static_cast<float>(n)); }

// The attention tensors of block i (q LoRA, latent, split k_b / v_b, output)
// and glm-dsa's indexer on its full layers and the NextN block. Scales as the
// fixtures': q and key entries give scores of std ~3 (peaked attention).
void AddMlaAttention(ModelPlan* p, int64_t i, int64_t L, const std::string& b) {
  const ModelShape& s = p->shape;
  const MlaShape& m = s.mla;
  const int64_t d = s.n_embd, H = s.n_head;
  auto mat = [&](const std::string& name, const std::string& role, std::vector<int64_t> dims, float std) {
    p->tensors.push_back({b + name, PlannedMatrixType(p->requested, role, i, L, dims[0]), std::move(dims), 0.0f, std});
  };
  auto vec = [&](const std::string& name, int64_t n, float mean, float std) {
    p->tensors.push_back({b + name, GgmlType::F32, {n}, mean, std});
  };
  vec("attn_norm.weight", d, 1.0f, 0.1f);
  mat("attn_q_a.weight", "attn_q_a", {d, m.q_lora}, InvSqrt(d));
  vec("attn_q_a_norm.weight", m.q_lora, 1.0f, 0.1f);
  mat("attn_q_b.weight", "attn_q_b", {m.q_lora, H * (m.nope + m.rope)}, std::sqrt(3.0f) * InvSqrt(m.q_lora));
  mat("attn_kv_a_mqa.weight", "attn_kv_a_mqa", {d, m.kv_lora + m.rope}, std::sqrt(3.0f) * InvSqrt(d));
  vec("attn_kv_a_norm.weight", m.kv_lora, 1.0f, 0.1f);
  mat("attn_k_b.weight", "attn_k_b", {m.nope, m.kv_lora, H}, std::sqrt(3.0f) * InvSqrt(m.kv_lora));
  mat("attn_v_b.weight", "attn_v_b", {m.kv_lora, m.v_head, H}, InvSqrt(m.kv_lora));
  mat("attn_output.weight", "attn_output", {H * m.v_head, d}, InvSqrt(H * m.v_head));
  vec("ffn_norm.weight", d, 1.0f, 0.1f);
  if (m.index_heads == 0) return;
  if (i < s.n_layer && !m.index_full[static_cast<size_t>(i)]) return;  // a shared layer: no indexer of its own
  vec("indexer.k_norm.weight", m.index_dim, 1.0f, 0.1f);
  vec("indexer.k_norm.bias", m.index_dim, 0.0f, 0.1f);
  p->tensors.push_back({b + "indexer.proj.weight", GgmlType::F32, {d, m.index_heads}, 0.0f, InvSqrt(d)});
  mat("indexer.attn_k.weight", "indexer.attn_k", {d, m.index_dim}, InvSqrt(d));
  mat("indexer.attn_q_b.weight", "indexer.attn_q_b", {m.q_lora, m.index_heads * m.index_dim}, InvSqrt(m.q_lora));
}

// The dense FFN of a leading layer, or the routed experts (router F32 and
// its selection bias, as llama.cpp's quantizer leaves them) and the shared one.
void AddMlaFfn(ModelPlan* p, int64_t i, int64_t L, const std::string& b) {
  const ModelShape& s = p->shape;
  const int64_t d = s.n_embd, E = s.n_expert, F = s.n_ff_exp, FS = s.mla.n_shared * F;
  auto mat = [&](const std::string& name, const std::string& role, std::vector<int64_t> dims, float std) {
    p->tensors.push_back({b + name, PlannedMatrixType(p->requested, role, i, L, dims[0]), std::move(dims), 0.0f, std});
  };
  if (i < s.mla.n_dense_lead) {
    mat("ffn_gate.weight", "ffn_gate", {d, s.n_ff}, InvSqrt(d));
    mat("ffn_up.weight", "ffn_up", {d, s.n_ff}, InvSqrt(d));
    mat("ffn_down.weight", "ffn_down", {s.n_ff, d}, InvSqrt(s.n_ff));
    return;
  }
  p->tensors.push_back({b + "ffn_gate_inp.weight", GgmlType::F32, {d, E}, 0.0f, 2.0f * InvSqrt(d)});
  p->tensors.push_back({b + "exp_probs_b.bias", GgmlType::F32, {E}, 0.0f, 0.05f});
  mat("ffn_gate_exps.weight", "ffn_gate_exps", {d, F, E}, InvSqrt(d));
  mat("ffn_up_exps.weight", "ffn_up_exps", {d, F, E}, InvSqrt(d));
  mat("ffn_down_exps.weight", "ffn_down_exps", {F, d, E}, InvSqrt(F));
  mat("ffn_gate_shexp.weight", "ffn_gate_shexp", {d, FS}, InvSqrt(d));
  mat("ffn_up_shexp.weight", "ffn_up_shexp", {d, FS}, InvSqrt(d));
  mat("ffn_down_shexp.weight", "ffn_down_shexp", {FS, d}, InvSqrt(FS));
}

}  // namespace

void AddMlaTensors(ModelPlan* p) {
  const ModelShape& s = p->shape;
  const int64_t d = s.n_embd, L = s.n_layer + s.mla.nextn, V = p->vocab_size;
  const float logit_std = 4.0f * std::pow(static_cast<float>(d) / 64.0f, 0.25f);
  p->tensors.push_back({"token_embd.weight", PlannedMatrixType(p->requested, "token_embd", -1, L, d), {d, V}, 0, 1});
  for (int64_t i = 0; i < L; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    AddMlaAttention(p, i, L, b);
    AddMlaFfn(p, i, L, b);
    if (i < s.n_layer) continue;
    // The NextN block's wiring: [enorm(embedding) | hnorm(hidden)] -> eh_proj.
    p->tensors.push_back({b + "nextn.eh_proj.weight",
                          PlannedMatrixType(p->requested, "nextn.eh_proj", i, L, 2 * d),
                          {2 * d, d},
                          0.0f,
                          InvSqrt(2 * d)});
    for (const char* norm : {"nextn.enorm.weight", "nextn.hnorm.weight", "nextn.shared_head_norm.weight"})
      p->tensors.push_back({b + norm, GgmlType::F32, {d}, 1.0f, 0.1f});
  }
  p->tensors.push_back({"output_norm.weight", GgmlType::F32, {d}, 1.0f, 0.1f});
  p->tensors.push_back(
      {"output.weight", PlannedMatrixType(p->requested, "output", -1, L, d), {d, V}, 0.0f, logit_std * InvSqrt(d)});
}

void AddMlaMetadata(const ModelPlan& p, GgufWriter* w) {
  const ModelShape& s = p.shape;
  const MlaShape& m = s.mla;
  const std::string a = p.arch + ".";
  auto u32 = [&](const std::string& key, int64_t v) { w->SetU32(a + key, static_cast<uint32_t>(v)); };
  u32("vocab_size", p.vocab_size);
  u32("context_length", s.context_length);
  u32("embedding_length", s.n_embd);
  u32("block_count", s.n_layer + m.nextn);  // counts the NextN block, as llama.cpp's converter writes it
  u32("feed_forward_length", s.n_ff);
  u32("attention.head_count", s.n_head);
  u32("attention.head_count_kv", 1);
  w->SetF32(a + "rope.freq_base", s.rope_theta);
  w->SetF32(a + "attention.layer_norm_rms_epsilon", s.rms_eps);
  u32("leading_dense_block_count", m.n_dense_lead);
  u32("attention.q_lora_rank", m.q_lora);
  u32("attention.kv_lora_rank", m.kv_lora);
  u32("attention.key_length", m.kv_lora + m.rope);  // the cached row: [latent | rope]
  u32("attention.value_length", m.kv_lora);
  u32("attention.key_length_mla", m.nope + m.rope);
  u32("attention.value_length_mla", m.v_head);
  u32("rope.dimension_count", m.rope);
  u32("expert_count", s.n_expert);
  u32("expert_used_count", s.n_expert_used);
  u32("expert_feed_forward_length", s.n_ff_exp);
  u32("expert_shared_count", m.n_shared);
  w->SetF32(a + "expert_weights_scale", m.routed_scale);
  w->SetBool(a + "expert_weights_norm", true);
  u32("expert_gating_func", 2);  // sigmoid
  u32("expert_group_count", m.n_group);
  u32("expert_group_used_count", m.group_used);
  u32("nextn_predict_layers", m.nextn);
  if (m.yarn_factor > 0) {
    w->SetString(a + "rope.scaling.type", "yarn");
    w->SetF32(a + "rope.scaling.factor", m.yarn_factor);
    u32("rope.scaling.original_context_length", m.yarn_orig_ctx);
    w->SetF32(a + "rope.scaling.yarn_beta_fast", 32.0f);
    w->SetF32(a + "rope.scaling.yarn_beta_slow", 1.0f);
    w->SetF32(a + "rope.scaling.yarn_log_multiplier", 0.1f * m.yarn_mscale_all_dim);  // the converter's 0.1 x
  }
  if (m.index_heads == 0) return;
  u32("attention.indexer.head_count", m.index_heads);
  u32("attention.indexer.key_length", m.index_dim);
  u32("attention.indexer.top_k", m.index_top_k);
  w->SetBoolArray(a + "attention.indexer.types", m.index_full);
}

}  // namespace pg
