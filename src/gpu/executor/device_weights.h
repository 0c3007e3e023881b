// DeviceWeights: a model's weights uploaded once into device memory for the
// device executor. Matrices of the six types the kernels decode (F32, F16,
// BF16, Q8_0, Q4_K, Q6_K) keep their GGUF bytes, FP8_E4M3 ones (Hugging Face FP8
// directories) their E4M3 bytes plus scales (device_fp8_weights.h); any other
// type is dequantized to BF16 at load (one log line per type saying so). Norm weights and biases
// are the f32 vectors ModelWeights makes; the RoPE inverse frequencies are
// Model::Load's (ModelWeights::InvFreq). A matrix shared by two
// roles (tied embeddings) is uploaded once.
//
// Thread-safety: immutable after Upload; owned by one DeviceExecutor.
#pragma once

#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "base/status.h"
#include "gpu/kernels/matmul.h"
#include "model/model_config.h"
#include "model/model_weights.h"

namespace pg::gpu {

struct DeviceLayer {
  const float* attn_norm = nullptr;
  const float* ffn_norm = nullptr;
  const float* bq = nullptr;  // all three or none
  const float* bk = nullptr;
  const float* bv = nullptr;
  const float* q_norm = nullptr;  // both or none
  const float* k_norm = nullptr;
  DeviceMatrix wq, wk, wv, wo;
  DeviceMatrix gate, up, down;  // dense layers (rows == 0 in MoE layers)
  // MoE layers: the router and the expert stacks (n_mats = n_expert each).
  DeviceMatrix router;
  const float* router_bias = nullptr;
  DeviceMatrix gate_exps, up_exps, down_exps;
  DeviceMatrix gate_shexp, up_shexp, down_shexp;  // rows == 0: no shared expert
  // MLA layers (model_weights.h): wq is attn_q without a q LoRA; wk_b / wv_b
  // are stacks of n_head matrices (one per head); the indexer's on full layers.
  DeviceMatrix wq_a, wq_b, wkv_a, wk_b, wv_b;
  const float* q_a_norm = nullptr;
  const float* kv_a_norm = nullptr;
  DeviceMatrix ix_q_b, ix_k, ix_proj;
  const float* ix_k_norm = nullptr;
  const float* ix_k_norm_b = nullptr;
};

class DeviceWeights {
 public:
  // Reads the file's tensors row-major (ModelWeights::Load without repacking)
  // and uploads them. Fails with a one-line error when device memory runs out.
  static Result<std::unique_ptr<DeviceWeights>> Upload(const ModelSource& source, const ModelConfig& config);
  ~DeviceWeights();
  DeviceWeights(const DeviceWeights&) = delete;
  DeviceWeights& operator=(const DeviceWeights&) = delete;

  DeviceMatrix token_embd;
  DeviceMatrix output;
  const float* output_norm = nullptr;
  const float* inv_freq = nullptr;       // (n_rot / 2)
  const double* mla_inv_freq = nullptr;  // MLA: (rope / 2) YaRN-corrected frequencies (MlaConfig::inv_freq)
  std::vector<DeviceLayer> layers;

  size_t bytes() const { return bytes_; }           // device memory held
  int64_t converted() const { return converted_; }  // matrices dequantized to BF16

 private:
  DeviceWeights() = default;
  Result<void*> Alloc(size_t bytes);
  Result<const float*> Vector(const float* host, int64_t n);
  // n_mats matrices of w's shape, matrix e at w.data + e * mat_bytes (0: one matrix).
  // keep_fp8 false: an FP8_E4M3 matrix becomes BF16 (the token embedding: GetRows reads no FP8).
  Result<DeviceMatrix> Matrix(const WeightMatrix& w, int64_t n_mats = 1, size_t mat_bytes = 0, bool keep_fp8 = true);
  Result<DeviceMatrix> Stack(const ExpertStack& s) { return Matrix(s.first, s.n_expert, s.expert_bytes); }
  Status UploadLayer(const LayerWeights& L, DeviceLayer* d);
  Status UploadMla(const LayerWeights& L, const MlaConfig& m, DeviceLayer* d);

  std::vector<void*> allocs_;
  std::unordered_map<const void*, DeviceMatrix> uploaded_;  // host data -> its upload
  std::unordered_map<int, int64_t> converted_by_type_;      // GgmlType -> matrices
  size_t bytes_ = 0;
  int64_t converted_ = 0;
};

}  // namespace pg::gpu
