#include "gpu/executor/device_weights.h"

#include <fmt/format.h>

#include "backend/cpu/fp16.h"
#include "backend/cpu/quant.h"
#include "backend/cpu/rope.h"
#include "base/log.h"
#include "gguf/ggml_type.h"
#include "gpu/runtime/gpu_vendor.h"

namespace pg::gpu {
namespace {

bool KeptInGgufForm(GgmlType t) {
  return t == GgmlType::F16 || t == GgmlType::BF16 || t == GgmlType::Q8_0 || t == GgmlType::Q4_K ||
         t == GgmlType::Q6_K;
}

std::vector<float> InvFreq(const ModelConfig& c, const float* rope_freqs) {
  RopeScaling scaling;
  if (c.rope_scale_factor > 0) {
    scaling.kind = RopeScaling::Kind::kLlama3;
    scaling.factor = c.rope_scale_factor;
    scaling.low_freq_factor = c.rope_low_freq_factor;
    scaling.high_freq_factor = c.rope_high_freq_factor;
    scaling.original_context = static_cast<float>(c.rope_orig_ctx);
  }
  std::vector<float> f(static_cast<size_t>(c.n_rot / 2));
  RopeInvFreq(c.n_rot, c.rope_base, scaling, rope_freqs, f.data());
  return f;
}

}  // namespace

DeviceWeights::~DeviceWeights() {
  for (void* p : allocs_) (void)gpuFree(p);
}

Result<void*> DeviceWeights::Alloc(size_t bytes) {
  void* p = nullptr;
  if (gpuError_t e = gpuMalloc(&p, std::max<size_t>(bytes, 1)); e != gpuSuccess) {
    (void)gpuGetLastError();
    return ResourceExhausted(fmt::format("device executor: gpuMalloc of {:.1f} MiB for the weights failed ({})",
                                         static_cast<double>(bytes) / (1 << 20), gpuGetErrorString(e)));
  }
  allocs_.push_back(p);
  bytes_ += bytes;
  return p;
}

Result<const float*> DeviceWeights::Vector(const float* host, int64_t n) {
  if (host == nullptr) return static_cast<const float*>(nullptr);
  const size_t bytes = static_cast<size_t>(n) * sizeof(float);
  PG_ASSIGN_OR_RETURN(void* d, Alloc(bytes));
  if (gpuMemcpy(d, host, bytes, gpuMemcpyHostToDevice) != gpuSuccess) return Internal("device executor: upload failed");
  return static_cast<const float*>(d);
}

Result<DeviceMatrix> DeviceWeights::Matrix(const WeightMatrix& w, int64_t n_mats, size_t mat_bytes) {
  if (w.rows == 0) return DeviceMatrix{};
  if (auto it = uploaded_.find(w.data); it != uploaded_.end()) return it->second;
  if (w.layout != WeightLayout::kRowMajor) return Internal("device executor: a matrix is not row-major");
  if (mat_bytes == 0) mat_bytes = static_cast<size_t>(w.rows) * w.row_bytes;
  DeviceMatrix d;
  d.rows = w.rows;
  d.cols = w.cols;
  if (KeptInGgufForm(w.type)) {
    d.type = static_cast<WType>(w.type);
    d.row_bytes = static_cast<int64_t>(w.row_bytes);
    d.mat_bytes = static_cast<int64_t>(mat_bytes);
    const size_t bytes = mat_bytes * static_cast<size_t>(n_mats);
    PG_ASSIGN_OR_RETURN(void* p, Alloc(bytes));
    if (gpuMemcpy(p, w.data, bytes, gpuMemcpyHostToDevice) != gpuSuccess)
      return Internal("device executor: upload failed");
    d.data = p;
  } else {
    // Dequantized to BF16 on the host, one row at a time, then uploaded.
    d.type = WType::kBF16;
    d.row_bytes = w.cols * 2;
    d.mat_bytes = w.rows * d.row_bytes;
    PG_ASSIGN_OR_RETURN(void* p, Alloc(static_cast<size_t>(d.mat_bytes * n_mats)));
    std::vector<float> row(static_cast<size_t>(w.cols));
    std::vector<uint16_t> bf(static_cast<size_t>(w.rows * w.cols));
    for (int64_t e = 0; e < n_mats; ++e) {
      const auto* m = static_cast<const uint8_t*>(w.data) + static_cast<size_t>(e) * mat_bytes;
      for (int64_t r = 0; r < w.rows; ++r) {
        PG_RETURN_IF_ERROR(DequantizeRow(w.type, m + r * w.row_bytes, row.data(), w.cols));
        F32ToBF16Row(row.data(), &bf[static_cast<size_t>(r * w.cols)], w.cols);
      }
      if (gpuMemcpy(static_cast<uint8_t*>(p) + e * d.mat_bytes, bf.data(), static_cast<size_t>(d.mat_bytes),
                    gpuMemcpyHostToDevice) != gpuSuccess)
        return Internal("device executor: upload failed");
    }
    d.data = p;
    ++converted_;
    ++converted_by_type_[static_cast<int>(w.type)];
  }
  uploaded_.emplace(w.data, d);
  return d;
}

Status DeviceWeights::UploadLayer(const LayerWeights& L, DeviceLayer* d) {
  // Vector lengths: the loader checked them against the config (ModelWeights::Load).
  const int64_t D = L.wq.cols, QD = L.wq.rows, KVD = L.wk.rows;
  PG_ASSIGN_OR_RETURN(d->attn_norm, Vector(L.attn_norm, D));
  PG_ASSIGN_OR_RETURN(d->ffn_norm, Vector(L.ffn_norm, D));
  PG_ASSIGN_OR_RETURN(d->bq, Vector(L.bq, QD));
  PG_ASSIGN_OR_RETURN(d->bk, Vector(L.bk, KVD));
  PG_ASSIGN_OR_RETURN(d->bv, Vector(L.bv, KVD));
  PG_ASSIGN_OR_RETURN(d->wq, Matrix(L.wq));
  PG_ASSIGN_OR_RETURN(d->wk, Matrix(L.wk));
  PG_ASSIGN_OR_RETURN(d->wv, Matrix(L.wv));
  PG_ASSIGN_OR_RETURN(d->wo, Matrix(L.wo));
  PG_ASSIGN_OR_RETURN(d->gate, Matrix(L.gate));
  PG_ASSIGN_OR_RETURN(d->up, Matrix(L.up));
  PG_ASSIGN_OR_RETURN(d->down, Matrix(L.down));
  PG_ASSIGN_OR_RETURN(d->router, Matrix(L.router));
  PG_ASSIGN_OR_RETURN(d->router_bias, Vector(L.router_bias, L.router.rows));
  PG_ASSIGN_OR_RETURN(d->gate_exps, Stack(L.gate_exps));
  PG_ASSIGN_OR_RETURN(d->up_exps, Stack(L.up_exps));
  PG_ASSIGN_OR_RETURN(d->down_exps, Stack(L.down_exps));
  PG_ASSIGN_OR_RETURN(d->gate_shexp, Matrix(L.gate_shexp));
  PG_ASSIGN_OR_RETURN(d->up_shexp, Matrix(L.up_shexp));
  PG_ASSIGN_OR_RETURN(d->down_shexp, Matrix(L.down_shexp));
  return Status::Ok();
}

Result<std::unique_ptr<DeviceWeights>> DeviceWeights::Upload(const GgufFile& file, const ModelConfig& c) {
  PG_ASSIGN_OR_RETURN(std::unique_ptr<ModelWeights> w, ModelWeights::Load(file, c, /*repack=*/false));
  std::unique_ptr<DeviceWeights> d(new DeviceWeights());
  PG_ASSIGN_OR_RETURN(d->token_embd, d->Matrix(w->token_embd));
  PG_ASSIGN_OR_RETURN(d->output, d->Matrix(w->output));
  PG_ASSIGN_OR_RETURN(d->output_norm, d->Vector(w->output_norm, c.n_embd));
  const std::vector<float> inv_freq = InvFreq(c, w->rope_freqs);
  PG_ASSIGN_OR_RETURN(d->inv_freq, d->Vector(inv_freq.data(), static_cast<int64_t>(inv_freq.size())));
  d->layers.resize(w->layers.size());
  for (size_t l = 0; l < w->layers.size(); ++l) {
    PG_RETURN_IF_ERROR(d->UploadLayer(w->layers[l], &d->layers[l]));
    // q/k norm vectors are head_dim long.
    PG_ASSIGN_OR_RETURN(d->layers[l].q_norm, d->Vector(w->layers[l].q_norm, c.head_dim));
    PG_ASSIGN_OR_RETURN(d->layers[l].k_norm, d->Vector(w->layers[l].k_norm, c.head_dim));
  }
  for (const auto& [type, n] : d->converted_by_type_)
    PG_LOG_INFO("device executor: {} matrices of type {} dequantized to BF16 at load (the kernels decode F16, BF16, "
                "Q8_0, Q4_K and Q6_K only)",
                n, TypeName(static_cast<GgmlType>(type)));
  return d;
}

}  // namespace pg::gpu
