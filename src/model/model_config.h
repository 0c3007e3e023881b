// ModelConfig: the hyperparameters of a decoder-only transformer, read from
// GGUF metadata ({arch}.* keys), for the architectures prosgrow runs:
//   llama  — rope NORM (adjacent pairs), optional llama3 rope scaling
//   qwen2  — rope NEOX (split halves), q/k/v projection bias
//   qwen3  — rope NEOX, RMSNorm on each q and k head before rope
// All three use RMSNorm, SwiGLU FFN, GQA and optionally tied embeddings.
// Thread-safety: plain value type.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "base/status.h"

namespace pg {

class GgufFile;

enum class RopeStyle { kNorm, kNeox };

struct ModelConfig {
  std::string arch;          // "llama" | "qwen2" | "qwen3"
  std::string name;          // general.name
  int64_t n_vocab = 0;
  int64_t n_embd = 0;        // hidden size
  int64_t n_layer = 0;
  int64_t n_head = 0;
  int64_t n_head_kv = 0;
  int64_t head_dim = 0;      // per head, for q and k (= v here)
  int64_t n_ff = 0;          // FFN inner size
  int64_t n_ctx_train = 0;   // {arch}.context_length
  float rms_eps = 1e-6f;
  float rope_base = 10000.0f;
  int64_t n_rot = 0;         // rotated dims per head (<= head_dim)
  RopeStyle rope_style = RopeStyle::kNorm;
  bool qkv_bias = false;     // qwen2
  bool qk_norm = false;      // qwen3
  bool tied_embeddings = false;

  // llama3 rope scaling ({arch}.rope.scaling.* or a rope_freqs tensor).
  float rope_scale_factor = 0;   // 0 = none
  float rope_low_freq_factor = 1;
  float rope_high_freq_factor = 4;
  int64_t rope_orig_ctx = 8192;

  int64_t q_dim() const { return n_head * head_dim; }
  int64_t kv_dim() const { return n_head_kv * head_dim; }

  // Validates the metadata and derives defaults; one-line errors.
  static Result<ModelConfig> FromGguf(const GgufFile& file);
  std::string Summary() const;
};

}  // namespace pg
