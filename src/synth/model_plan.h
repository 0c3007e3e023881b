// ModelPlan: what make-model writes for a shape, architecture and weight
// type: the hyper-parameters, the metadata keys llama.cpp reads, and every
// tensor with its name, type, dims and initialization scale. Computing a plan
// writes nothing, so the 0.5b/1.5b layouts are testable without GBs of disk.
//
// Thread-safety: pure functions and value types.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"
#include "gguf/ggml_type.h"

namespace pg {

class GgufWriter;

// Multi-head latent attention (deepseek2, glm-dsa; model/mla_config.h).
// kv_lora == 0: not an MLA shape.
struct MlaShape {
  std::string arch;  // the one architecture the shape is written as
  int64_t q_lora = 0, kv_lora = 0, nope = 0, rope = 0, v_head = 0;
  int64_t index_heads = 0, index_dim = 0, index_top_k = 0;  // glm-dsa's lightning indexer (0: none)
  std::vector<bool> index_full;                             // (n_layer) layers running their own indexer
  int64_t n_dense_lead = 0, n_shared = 0, n_group = 1, group_used = 1, nextn = 0;
  float routed_scale = 1.0f;
  float yarn_factor = 0.0f;  // > 0: YaRN (deepseek2)
  int64_t yarn_orig_ctx = 0;
  float yarn_mscale_all_dim = 0.0f;
};

struct ModelShape {
  std::string name;
  int64_t n_embd = 0;  // hidden size
  int64_t n_layer = 0;
  int64_t n_head = 0;
  int64_t n_head_kv = 0;         // GQA: n_head % n_head_kv == 0
  int64_t head_dim = 0;          // per head (q, k and v)
  int64_t n_ff = 0;              // SwiGLU inner size
  int64_t context_length = 0;    // tokens
  bool tied_embeddings = false;  // output.weight omitted, token_embd reused
  float rope_theta = 10000.0f;
  float rms_eps = 1e-6f;
  // Mixture of Experts (n_expert == 0: dense). An MoE shape is written as
  // qwen3moe (every layer MoE) or glm4moe (layer 0 dense with n_ff, then MoE,
  // plus one shared expert of n_ff_exp, rope on half of each head).
  int64_t n_expert = 0;
  int64_t n_expert_used = 0;  // top-k
  int64_t n_ff_exp = 0;       // one expert's SwiGLU width
  MlaShape mla;               // MLA shapes (glm5-mini, deepseek-v3-mini); head_dim, n_head_kv unused

  bool is_moe() const { return n_expert > 0; }
  bool is_mla() const { return mla.kv_lora > 0; }
};

// Shapes: "tiny", "60m", "0.5b", "1.5b" (dense); "tiny-moe", "30b-a3b-mini"
// (MoE); "glm5-mini" (glm-dsa), "deepseek-v3-mini" (deepseek2): MLA MoE
// shapes with a NextN block (mla_plan.h). InvalidArgument for other names.
Result<ModelShape> FindModelShape(const std::string& name);
const std::vector<std::string>& ModelShapeNames();

// Architectures: "llama", "qwen2", "qwen3" (dense shapes); "qwen3moe",
// "glm4moe" (MoE shapes); "glm-dsa", "deepseek2" (their MLA shapes).
bool IsSupportedSynthArch(const std::string& arch);

// The stored type of a 2-D (or expert-stack) weight of `role` ("attn_v",
// "ffn_down_exps", "token_embd" ...) in layer `layer` of n_layer for a
// requested type: Q4_K gives a Q4_K_M-like mix (model_plan.cc).
GgmlType PlannedMatrixType(GgmlType requested, const std::string& role, int64_t layer, int64_t n_layer, int64_t ne0);
bool IsMoeSynthArch(const std::string& arch);

// One tensor. Values are mean + std * z with z ~ N(0, 1)-like (see
// weight_generator.h), then converted to `type`.
struct PlannedTensor {
  std::string name;
  GgmlType type = GgmlType::F32;
  std::vector<int64_t> dims;  // dims[0] contiguous (GGUF ne order); 3-D for expert stacks
  float mean = 0.0f;
  float std = 0.0f;

  int64_t n_elements() const;
};

struct ModelPlan {
  ModelShape shape;
  std::string arch;
  GgmlType requested = GgmlType::F16;  // F16, BF16, Q8_0 or Q4_K (= a Q4_K_M-like mix)
  int64_t vocab_size = 0;
  uint32_t file_type = 0;  // llama_ftype: 1 F16, 32 BF16, 7 Q8_0, 15 Q4_K_M
  std::vector<PlannedTensor> tensors;

  int64_t n_params() const;
  uint64_t n_bytes() const;  // tensor data, unpadded
};

// Parses "f16" | "bf16" | "q8_0" | "q4_k" (case-insensitive).
Result<GgmlType> ParseSynthType(const std::string& name);

// The full plan. InvalidArgument for an unknown shape/arch/type or a vocab
// size < 1.
Result<ModelPlan> PlanModel(const std::string& shape, const std::string& arch, GgmlType type, int64_t vocab_size);

// Writes general.* and {arch}.* keys (not tokenizer.*) of the plan.
void AddModelMetadata(const ModelPlan& plan, const std::string& model_name, GgufWriter* w);

}  // namespace pg
