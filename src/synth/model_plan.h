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

  bool is_moe() const { return n_expert > 0; }
};

// Shapes: "tiny", "60m", "0.5b", "1.5b" (dense); "tiny-moe", "30b-a3b-mini"
// (MoE). InvalidArgument for other names.
Result<ModelShape> FindModelShape(const std::string& name);
const std::vector<std::string>& ModelShapeNames();

// Architectures: "llama", "qwen2", "qwen3" (dense shapes); "qwen3moe",
// "glm4moe" (MoE shapes).
bool IsSupportedSynthArch(const std::string& arch);
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
