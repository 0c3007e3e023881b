#include "synth/model_plan.h"

#include <algorithm>
#include <cctype>
#include <cmath>

#include "gguf/gguf_writer.h"
#include "synth/mla_plan.h"

namespace pg {
namespace {

// Shapes and what each is based on.
ModelShape Tiny() {
  // For tests: the layout of the tiny fixture models (dim 64, 4 heads, 2 KV
  // heads, head_dim 16), with 2 layers to stay fast and SwiGLU 256 (not the
  // fixtures' 192) so that ffn_down rows take real K-quants in q4_k files.
  return {"tiny", 64, 2, 4, 2, 16, 256, 4096, false, 10000.0f, 1e-6f};
}
ModelShape M60() {
  // A ~60M-parameter Llama-style model (with a 32k vocab; ~32M with the
  // builtin 8k vocab): width 512 as in Pythia-70M / GPT-2-small-sized
  // research models, 8 layers, 8 heads of 64 with 2 KV heads (GQA 4:1, as in
  // Llama 3 / Qwen2.5), SwiGLU 1536 (3x width). Also the default model.
  return {"60m", 512, 8, 8, 2, 64, 1536, 4096, false, 10000.0f, 1e-6f};
}
ModelShape Qwen05() {
  // Qwen2.5-0.5B (config.json): hidden 896, 24 layers, 14 heads, 2 KV heads,
  // head_dim 64, intermediate 4864, tied embeddings, rope_theta 1e6,
  // rms_norm_eps 1e-6, max_position_embeddings 32768.
  return {"0.5b", 896, 24, 14, 2, 64, 4864, 32768, true, 1000000.0f, 1e-6f};
}
ModelShape Qwen15() {
  // Qwen2.5-1.5B (config.json): hidden 1536, 28 layers, 12 heads, 2 KV
  // heads, head_dim 128, intermediate 8960, tied embeddings, rope_theta 1e6,
  // rms_norm_eps 1e-6, max_position_embeddings 32768.
  return {"1.5b", 1536, 28, 12, 2, 128, 8960, 32768, true, 1000000.0f, 1e-6f};
}

// `s` as a Mixture of Experts: n_expert experts of SwiGLU width n_ff_exp, top-`used`.
ModelShape WithExperts(ModelShape s, int64_t n_expert, int64_t used, int64_t n_ff_exp) {
  s.n_expert = n_expert;
  s.n_expert_used = used;
  s.n_ff_exp = n_ff_exp;
  return s;
}

ModelShape TinyMoe() {
  // For tests: the tiny fixtures' attention (dim 64, 4 heads / 2 KV heads of
  // 16) over 3 layers, 8 experts, top-2. Expert and dense widths are 256 so
  // that ffn_down rows take real K-quants in q4_k files.
  return WithExperts({"tiny-moe", 64, 3, 4, 2, 16, 256, 4096, false, 1000000.0f, 1e-6f}, 8, 2, 256);
}
ModelShape Qwen3MoeMini() {
  // Qwen3-30B-A3B (config.json: hidden 2048, 48 layers, 32 heads / 4 KV heads
  // of head_dim 128, so q width 4096 = 2 x hidden; 128 experts, top-8,
  // moe_intermediate_size 768 = 0.375 x hidden; rope_theta 1e6, rms 1e-6,
  // 40960 positions, untied) scaled to run on 2 cores: hidden 512, 8 layers,
  // 16 heads / 2 KV heads of 64 (q width 1024 = 2 x hidden, GQA 8:1), the
  // same 128 experts and top-8, expert width 192 = 0.375 x hidden. About 0.3B
  // parameters, ~20M of them active per token.
  return WithExperts({"30b-a3b-mini", 512, 8, 16, 2, 64, 1536, 40960, false, 1000000.0f, 1e-6f}, 128, 8, 192);
}

// llama.cpp's use_more_bits(): the layers a Q4_K_M file gives Q6_K for
// attn_v and ffn_down: the first and last eighth, and every third between.
bool UseMoreBits(int64_t layer, int64_t n_layer) {
  return layer < n_layer / 8 || layer >= 7 * n_layer / 8 || (layer - n_layer / 8) % 3 == 2;
}

// The stored type of a 2-D weight matrix.
//
// F16 / BF16 / Q8_0 / NVFP4 / FP8_E4M3: that type everywhere (every shape's
// rows are a multiple of NVFP4's and FP8_E4M3's 64-element blocks).
// Q4_K (a Q4_K_M-like mix, after llama.cpp's llama_tensor_get_type):
//   token_embd, output                         -> Q6_K
//   attn_v, ffn_down of UseMoreBits() layers   -> Q6_K
//   every other matrix                         -> Q4_K
// A K-quant needs rows that are a multiple of 256; where they are not (e.g.
// the 896-wide rows of the 0.5b shape, or all of tiny), Q6_K falls back to
// Q8_0 and Q4_K to Q5_0, as llama.cpp's tensor_type_fallback does.
GgmlType MatrixType(GgmlType requested, const std::string& role, int64_t layer, int64_t n_layer, int64_t ne0) {
  if (requested != GgmlType::Q4_K) return requested;
  bool six = role == "token_embd" || role == "output";
  // llama.cpp matches "ffn_down" in the name: the expert and shared-expert stacks too.
  const bool down = role == "ffn_down" || role == "ffn_down_exps" || role == "ffn_down_shexp";
  if ((role == "attn_v" || down) && UseMoreBits(layer, n_layer)) six = true;
  if (ne0 % 256 != 0) return six ? GgmlType::Q8_0 : GgmlType::Q5_0;
  return six ? GgmlType::Q6_K : GgmlType::Q4_K;
}

uint32_t FileTypeOf(GgmlType t) {
  switch (t) {
    case GgmlType::F16: return 1;          // LLAMA_FTYPE_MOSTLY_F16
    case GgmlType::Q8_0: return 7;         // LLAMA_FTYPE_MOSTLY_Q8_0
    case GgmlType::Q4_K: return 15;        // LLAMA_FTYPE_MOSTLY_Q4_K_M
    case GgmlType::BF16: return 32;        // LLAMA_FTYPE_MOSTLY_BF16
    case GgmlType::NVFP4: return 39;       // LLAMA_FTYPE_MOSTLY_NVFP4
    case GgmlType::FP8_E4M3: return 1024;  // LLAMA_FTYPE_GUESSED: llama.cpp has no name (nor type) for it
    default: return 0;
  }
}

}  // namespace

Result<ModelShape> FindModelShape(const std::string& name) {
  if (name == "tiny") return Tiny();
  if (name == "60m") return M60();
  if (name == "0.5b") return Qwen05();
  if (name == "1.5b") return Qwen15();
  if (name == "tiny-moe") return TinyMoe();
  if (name == "30b-a3b-mini") return Qwen3MoeMini();
  if (name == "glm5-mini") return Glm5MiniShape();
  if (name == "deepseek-v3-mini") return DeepseekV3MiniShape();
  return InvalidArgument("unknown model shape '" + name +
                         "' (expected tiny, 60m, 0.5b, 1.5b, tiny-moe, 30b-a3b-mini, glm5-mini or deepseek-v3-mini)");
}

const std::vector<std::string>& ModelShapeNames() {
  static const std::vector<std::string> kNames = {"tiny",     "60m",          "0.5b",      "1.5b",
                                                  "tiny-moe", "30b-a3b-mini", "glm5-mini", "deepseek-v3-mini"};
  return kNames;
}

bool IsMoeSynthArch(const std::string& arch) { return arch == "qwen3moe" || arch == "glm4moe"; }

bool IsSupportedSynthArch(const std::string& arch) {
  return arch == "llama" || arch == "qwen2" || arch == "qwen3" || IsMoeSynthArch(arch) || arch == "glm-dsa" ||
         arch == "deepseek2";
}

GgmlType PlannedMatrixType(GgmlType requested, const std::string& role, int64_t layer, int64_t n_layer, int64_t ne0) {
  return MatrixType(requested, role, layer, n_layer, ne0);
}

int64_t PlannedTensor::n_elements() const {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  return n;
}

int64_t ModelPlan::n_params() const {
  int64_t n = 0;
  for (const auto& t : tensors) n += t.n_elements();
  return n;
}

uint64_t ModelPlan::n_bytes() const {
  uint64_t n = 0;
  for (const auto& t : tensors) n += RowBytes(t.type, t.dims[0]) * static_cast<uint64_t>(t.n_elements() / t.dims[0]);
  return n;
}

Result<GgmlType> ParseSynthType(const std::string& name) {
  std::string s = name;
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  if (s == "f16") return GgmlType::F16;
  if (s == "bf16") return GgmlType::BF16;
  if (s == "q8_0") return GgmlType::Q8_0;
  if (s == "q4_k" || s == "q4_k_m") return GgmlType::Q4_K;
  if (s == "nvfp4") return GgmlType::NVFP4;
  if (s == "fp8_e4m3" || s == "fp8") return GgmlType::FP8_E4M3;
  return InvalidArgument("unknown weight type '" + name + "' (expected f16, bf16, q8_0, q4_k, nvfp4 or fp8_e4m3)");
}

namespace {

// glm4moe: leading dense layers, shared experts, routed scaling (GLM-4.5's
// first_k_dense_replace, n_shared_experts, routed_scaling_factor).
constexpr int64_t kGlmDenseLayers = 1;
constexpr int64_t kGlmSharedExperts = 1;
constexpr float kGlmRoutedScale = 2.5f;

// The tensors of one MoE layer: the router (F32, as llama.cpp's quantizer
// leaves it), glm4moe's selection bias, the three expert stacks and
// glm4moe's shared expert. Router std 2/sqrt(d) gives logits of std ~2, so
// routing is decided, not uniform.
void AddMoeTensors(const std::string& b, int64_t layer, int64_t d, const std::string& arch, GgmlType type,
                   ModelPlan* p) {
  const ModelShape& s = p->shape;
  const int64_t E = s.n_expert, F = s.n_ff_exp, L = s.n_layer;
  auto inv_sqrt = [](int64_t n) { return 1.0f / std::sqrt(static_cast<float>(n)); };
  p->tensors.push_back({b + "ffn_gate_inp.weight", GgmlType::F32, {d, E}, 0.0f, 2.0f * inv_sqrt(d)});
  if (arch == "glm4moe") p->tensors.push_back({b + "exp_probs_b.bias", GgmlType::F32, {E}, 0.0f, 0.05f});
  auto stack = [&](const std::string& name, const std::string& role, int64_t ne0, int64_t ne1, float std) {
    p->tensors.push_back({b + name, MatrixType(type, role, layer, L, ne0), {ne0, ne1, E}, 0.0f, std});
  };
  stack("ffn_gate_exps.weight", "ffn_gate_exps", d, F, inv_sqrt(d));
  stack("ffn_up_exps.weight", "ffn_up_exps", d, F, inv_sqrt(d));
  stack("ffn_down_exps.weight", "ffn_down_exps", F, d, inv_sqrt(F));
  if (arch != "glm4moe") return;
  const int64_t FS = kGlmSharedExperts * F;
  auto mat = [&](const std::string& name, const std::string& role, int64_t ne0, int64_t ne1, float std) {
    p->tensors.push_back({b + name, MatrixType(type, role, layer, L, ne0), {ne0, ne1}, 0.0f, std});
  };
  mat("ffn_gate_shexp.weight", "ffn_gate_shexp", d, FS, inv_sqrt(d));
  mat("ffn_up_shexp.weight", "ffn_up_shexp", d, FS, inv_sqrt(d));
  mat("ffn_down_shexp.weight", "ffn_down_shexp", FS, d, inv_sqrt(FS));
}

}  // namespace

Result<ModelPlan> PlanModel(const std::string& shape_name, const std::string& arch, GgmlType type, int64_t vocab_size) {
  PG_ASSIGN_OR_RETURN(ModelShape shape, FindModelShape(shape_name));
  if (!IsSupportedSynthArch(arch))
    return InvalidArgument("unknown architecture '" + arch +
                           "' (expected llama, qwen2, qwen3, qwen3moe, glm4moe, glm-dsa or deepseek2)");
  if (shape.is_mla() != (arch == "glm-dsa" || arch == "deepseek2") || (shape.is_mla() && arch != shape.mla.arch))
    return InvalidArgument("shape '" + shape_name + "' is written as " +
                           (shape.is_mla() ? shape.mla.arch : "a non-MLA architecture") +
                           (shape.is_mla() ? " only" : ": glm-dsa and deepseek2 take glm5-mini / deepseek-v3-mini"));
  if (!shape.is_mla() && shape.is_moe() != IsMoeSynthArch(arch))
    return InvalidArgument("shape '" + shape_name + "' is " + (shape.is_moe() ? "MoE" : "dense") + ": use --arch " +
                           (shape.is_moe() ? "qwen3moe or glm4moe" : "llama, qwen2 or qwen3"));
  if (FileTypeOf(type) == 0)
    return InvalidArgument(std::string("unsupported weight type ") + TypeName(type) +
                           " (expected F16, BF16, Q8_0, Q4_K, NVFP4 or FP8_E4M3)");
  if (vocab_size < 1 || vocab_size > (int64_t{1} << 24))
    return InvalidArgument("vocab size " + std::to_string(vocab_size) + " is out of range");

  ModelPlan p;
  p.shape = shape;
  p.arch = arch;
  p.requested = type;
  p.vocab_size = vocab_size;
  p.file_type = FileTypeOf(type);
  if (shape.is_mla()) {
    AddMlaTensors(&p);
    return p;
  }

  const int64_t d = shape.n_embd, hd = shape.head_dim, nq = shape.n_head * hd, nkv = shape.n_head_kv * hd;
  const int64_t L = shape.n_layer;
  // Scales, calibrated on the fixture models (per-tensor std measured with
  // GgufFile): q/k sqrt(3/fan_in) so attention scores have std ~3 (peaked,
  // not uniform); v/o/gate/up/down 1/sqrt(fan_in); norms 1 +- 0.1. Logits get
  // std ~4 * (d/64)^(1/4): the fixtures' 4 at width 64, growing slowly with
  // width so next-token distributions are peaked at every size.
  const float logit_std = 4.0f * std::pow(static_cast<float>(d) / 64.0f, 0.25f);
  const float out_std = logit_std / std::sqrt(static_cast<float>(d));
  auto inv_sqrt = [](int64_t n) { return 1.0f / std::sqrt(static_cast<float>(n)); };
  auto mat = [&](const std::string& name, const std::string& role, int64_t layer, int64_t ne0, int64_t ne1, float std) {
    p.tensors.push_back({name, MatrixType(type, role, layer, L, ne0), {ne0, ne1}, 0.0f, std});
  };
  auto vec = [&](const std::string& name, int64_t n, float mean, float std) {
    p.tensors.push_back({name, GgmlType::F32, {n}, mean, std});
  };

  // With tied embeddings the same matrix makes the logits, so it takes the
  // output scale; untied, the input embedding has unit std as in the fixtures.
  mat("token_embd.weight", "token_embd", -1, d, vocab_size, shape.tied_embeddings ? out_std : 1.0f);
  for (int64_t i = 0; i < L; ++i) {
    const std::string b = "blk." + std::to_string(i) + ".";
    vec(b + "attn_norm.weight", d, 1.0f, 0.1f);
    mat(b + "attn_q.weight", "attn_q", i, d, nq, std::sqrt(3.0f) * inv_sqrt(d));
    mat(b + "attn_k.weight", "attn_k", i, d, nkv, std::sqrt(3.0f) * inv_sqrt(d));
    mat(b + "attn_v.weight", "attn_v", i, d, nkv, inv_sqrt(d));
    if (arch == "qwen2" || arch == "glm4moe") {
      vec(b + "attn_q.bias", nq, 0.0f, 0.1f);
      vec(b + "attn_k.bias", nkv, 0.0f, 0.1f);
      vec(b + "attn_v.bias", nkv, 0.0f, 0.1f);
    }
    if (arch == "qwen3" || arch == "qwen3moe") {
      // q/k are RMS-normalized per head; a gain of ~1.5 keeps scores at std ~2.
      vec(b + "attn_q_norm.weight", hd, 1.5f, 0.1f);
      vec(b + "attn_k_norm.weight", hd, 1.5f, 0.1f);
    }
    mat(b + "attn_output.weight", "attn_output", i, nq, d, inv_sqrt(nq));
    vec(b + (arch == "glm4moe" ? "post_attention_norm.weight" : "ffn_norm.weight"), d, 1.0f, 0.1f);
    if (!shape.is_moe() || (arch == "glm4moe" && i < kGlmDenseLayers)) {
      mat(b + "ffn_gate.weight", "ffn_gate", i, d, shape.n_ff, inv_sqrt(d));
      mat(b + "ffn_up.weight", "ffn_up", i, d, shape.n_ff, inv_sqrt(d));
      mat(b + "ffn_down.weight", "ffn_down", i, shape.n_ff, d, inv_sqrt(shape.n_ff));
      continue;
    }
    AddMoeTensors(b, i, d, arch, type, &p);
  }
  vec("output_norm.weight", d, 1.0f, 0.1f);
  if (!shape.tied_embeddings) mat("output.weight", "output", -1, d, vocab_size, out_std);
  return p;
}

void AddModelMetadata(const ModelPlan& p, const std::string& model_name, GgufWriter* w) {
  const ModelShape& s = p.shape;
  const std::string a = p.arch + ".";
  w->SetString("general.architecture", p.arch);
  w->SetString("general.name", model_name);
  w->SetU32("general.file_type", p.file_type);
  w->SetU32("general.quantization_version", 2);
  if (s.is_mla()) {
    AddMlaMetadata(p, w);
    return;
  }
  w->SetU32(a + "vocab_size", static_cast<uint32_t>(p.vocab_size));
  w->SetU32(a + "context_length", static_cast<uint32_t>(s.context_length));
  w->SetU32(a + "embedding_length", static_cast<uint32_t>(s.n_embd));
  w->SetU32(a + "block_count", static_cast<uint32_t>(s.n_layer));
  w->SetU32(a + "feed_forward_length", static_cast<uint32_t>(s.n_ff));
  w->SetU32(a + "attention.head_count", static_cast<uint32_t>(s.n_head));
  w->SetU32(a + "attention.head_count_kv", static_cast<uint32_t>(s.n_head_kv));
  // glm4moe rotates half of each head (GLM-4.5's partial_rotary_factor 0.5).
  w->SetU32(a + "rope.dimension_count", static_cast<uint32_t>(p.arch == "glm4moe" ? s.head_dim / 2 : s.head_dim));
  if (p.arch == "qwen3" || s.is_moe() || s.head_dim * s.n_head != s.n_embd) {
    w->SetU32(a + "attention.key_length", static_cast<uint32_t>(s.head_dim));
    w->SetU32(a + "attention.value_length", static_cast<uint32_t>(s.head_dim));
  }
  w->SetF32(a + "rope.freq_base", s.rope_theta);
  w->SetF32(a + "attention.layer_norm_rms_epsilon", s.rms_eps);
  if (!s.is_moe()) return;
  w->SetU32(a + "expert_count", static_cast<uint32_t>(s.n_expert));
  w->SetU32(a + "expert_used_count", static_cast<uint32_t>(s.n_expert_used));
  w->SetU32(a + "expert_feed_forward_length", static_cast<uint32_t>(s.n_ff_exp));
  if (p.arch != "glm4moe") return;
  w->SetU32(a + "expert_shared_count", static_cast<uint32_t>(kGlmSharedExperts));
  w->SetU32(a + "leading_dense_block_count", static_cast<uint32_t>(kGlmDenseLayers));
  w->SetU32(a + "expert_gating_func", 2);  // sigmoid
  w->SetF32(a + "expert_weights_scale", kGlmRoutedScale);
  w->SetBool(a + "expert_weights_norm", true);
  w->SetU32(a + "expert_group_count", 1);
  w->SetU32(a + "expert_group_used_count", 1);
  w->SetU32(a + "nextn_predict_layers", 0);
}

}  // namespace pg
