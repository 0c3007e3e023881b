// ModelConfigFromHf: a Hugging Face config.json as a ModelConfig, for the
// architectures prosgrow runs (model_type llama, qwen2, qwen3, qwen3_moe,
// glm4_moe), with the same semantics ModelConfig::FromGguf gives the GGUF
// that llama.cpp's converter makes of the same checkpoint. Anything the
// forward pass does not implement (another model_type, rope scaling type,
// quantization method, grouped expert routing, ...) is refused by name.
// Errors are one line: "<file>: <field> ...".
//
// Thread-safety: pure function.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "base/status.h"
#include "model/model_config.h"

namespace pg {

// `file` names config.json in messages; `name` becomes ModelConfig::name.
// n_vocab is config.json's vocab_size; tied_embeddings is left to the caller
// (whether lm_head.weight exists).
Result<ModelConfig> ModelConfigFromHf(const nlohmann::json& j, const std::string& file, const std::string& name);

// config.json's quantization_config.quant_method ("" when there is none).
// Unknown methods are refused (InvalidArgument naming the method).
Result<std::string> HfQuantMethod(const nlohmann::json& j, const std::string& file);

// quantization_config of quant_method "fp8" (DeepSeek-V3, Qwen3-FP8 and GLM
// FP8 checkpoints): E4M3 weights, each with a float scale companion.
//   fmt               "e4m3" (or absent); anything else is refused
//   weight_block_size [128, 128]: `X.weight_scale_inv` [ceil(rows / 128),
//                     ceil(cols / 128)]; absent or null: the scale's shape
//                     decides, per tensor ([] or [1]) or per channel ([rows]
//                     or [rows, 1]), from `X.weight_scale_inv` or `X.weight_scale`
//   activation_scheme "dynamic" or "static": activations stay f32 either way
//                     (input_scale tensors are not read)
struct HfFp8Config {
  bool block128 = false;
};
Result<HfFp8Config> HfFp8ConfigOf(const nlohmann::json& j, const std::string& file);

// The dtype config.json declares for the weights ("torch_dtype", or
// "dtype"): "bfloat16" | "float16" | "float32", or "" if absent.
Result<std::string> HfModelDtype(const nlohmann::json& j, const std::string& file);

}  // namespace pg
