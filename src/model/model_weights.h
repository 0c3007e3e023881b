// ModelWeights: views of a GGUF file's tensors arranged per layer. Matrices
// stay in the file's mapping (any supported type), unless repacked at load
// (then the repacked copies are owned here; token_embd, read by row for the
// embedding lookup, always stays in the mapping); small vectors (norms,
// biases) are converted to f32 and owned here.
// Thread-safety: immutable after Load(); shared by all forward passes.
#pragma once

#include <memory>
#include <vector>

#include "backend/cpu/matmul.h"
#include "backend/cpu/repack.h"
#include "base/status.h"
#include "model/model_config.h"

namespace pg {

class GgufFile;

struct LayerWeights {
  const float* attn_norm = nullptr;  // (n_embd)
  WeightMatrix wq;                   // (q_dim, n_embd)
  WeightMatrix wk;                   // (kv_dim, n_embd)
  WeightMatrix wv;                   // (kv_dim, n_embd)
  WeightMatrix wo;                   // (n_embd, q_dim)
  const float* bq = nullptr;         // (q_dim)  qwen2 only
  const float* bk = nullptr;         // (kv_dim) qwen2 only
  const float* bv = nullptr;         // (kv_dim) qwen2 only
  const float* q_norm = nullptr;     // (head_dim) qwen3 only
  const float* k_norm = nullptr;     // (head_dim) qwen3 only
  const float* ffn_norm = nullptr;   // (n_embd)
  WeightMatrix gate;                 // (n_ff, n_embd)
  WeightMatrix up;                   // (n_ff, n_embd)
  WeightMatrix down;                 // (n_embd, n_ff)
};

struct ModelWeights {
  WeightMatrix token_embd;           // (n_vocab, n_embd)
  WeightMatrix output;               // (n_vocab, n_embd); = token_embd when tied
  const float* output_norm = nullptr;  // (n_embd)
  const float* rope_freqs = nullptr;   // (n_rot/2) optional llama3 factors
  std::vector<LayerWeights> layers;

  // Validates every tensor's presence, type and shape against the config.
  // With `repack`, the matrices MatMul reads (not token_embd) that have a
  // repacked layout are copied into it (RepackedWeights::AddAll, for the
  // active kernel table) and their pages of the file mapping released.
  static Result<std::unique_ptr<ModelWeights>> Load(const GgufFile& file, const ModelConfig& config,
                                                    bool repack = false);

  // Bytes of repacked copies (0 without repacking).
  size_t repacked_bytes() const { return repacked_.bytes(); }

 private:
  std::vector<std::vector<float>> owned_;  // f32 copies of small vectors
  RepackedWeights repacked_;
};

}  // namespace pg
