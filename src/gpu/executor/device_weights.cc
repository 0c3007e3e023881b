#include "gpu/executor/device_weights.h"

#include <fmt/format.h>

#include <tuple>
#include <utility>

#include "backend/cpu/fp16.h"
#include "backend/cpu/quant.h"
#include "base/log.h"
#include "gguf/ggml_type.h"
#include "gpu/executor/device_fp8_weights.h"
#include "gpu/runtime/gpu_vendor.h"

namespace pg::gpu {
namespace {

bool KeptInGgufForm(GgmlType t) {
  return t == GgmlType::F32 || t == GgmlType::F16 || t == GgmlType::BF16 || t == GgmlType::Q8_0 ||
         t == GgmlType::Q4_K || t == GgmlType::Q6_K;
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

Result<DeviceMatrix> DeviceWeights::Matrix(const WeightMatrix& w, int64_t n_mats, size_t mat_bytes, bool keep_fp8) {
  if (w.rows == 0) return DeviceMatrix{};
  if (auto it = uploaded_.find(w.data); it != uploaded_.end()) return it->second;
  if (w.layout != WeightLayout::kRowMajor) return Internal("device executor: a matrix is not row-major");
  if (mat_bytes == 0) mat_bytes = static_cast<size_t>(w.rows) * w.row_bytes;
  DeviceMatrix d;
  d.rows = w.rows;
  d.cols = w.cols;
  if (w.type == GgmlType::FP8_E4M3 && keep_fp8) {  // one byte a weight plus its scales (device_fp8_weights.h)
    PG_ASSIGN_OR_RETURN(d, UploadFp8Matrix(w, n_mats, mat_bytes, [this](size_t b) { return Alloc(b); }));
  } else if (KeptInGgufForm(w.type)) {
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
  // (An MLA layer with a q LoRA has no wq: its width is kv_a's input.)
  const int64_t D = L.wq.rows > 0 ? L.wq.cols : L.wkv_a.cols, QD = L.wq.rows, KVD = L.wk.rows;
  // Each role's host data, length (vectors) and device slot, in upload order.
  const std::tuple<const float*, int64_t, const float**> vectors[] = {{L.attn_norm, D, &d->attn_norm},
                                                                      {L.ffn_norm, D, &d->ffn_norm},
                                                                      {L.bq, QD, &d->bq},
                                                                      {L.bk, KVD, &d->bk},
                                                                      {L.bv, KVD, &d->bv},
                                                                      {L.router_bias, L.router.rows, &d->router_bias}};
  const std::pair<const WeightMatrix*, DeviceMatrix*> matrices[] = {{&L.wq, &d->wq},
                                                                    {&L.wk, &d->wk},
                                                                    {&L.wv, &d->wv},
                                                                    {&L.wo, &d->wo},
                                                                    {&L.gate, &d->gate},
                                                                    {&L.up, &d->up},
                                                                    {&L.down, &d->down},
                                                                    {&L.router, &d->router},
                                                                    {&L.gate_shexp, &d->gate_shexp},
                                                                    {&L.up_shexp, &d->up_shexp},
                                                                    {&L.down_shexp, &d->down_shexp}};
  const std::pair<const ExpertStack*, DeviceMatrix*> stacks[] = {
      {&L.gate_exps, &d->gate_exps}, {&L.up_exps, &d->up_exps}, {&L.down_exps, &d->down_exps}};
  for (const auto& [host, n, dev] : vectors) {
    PG_ASSIGN_OR_RETURN(*dev, Vector(host, n));
  }
  for (const auto& [host, dev] : matrices) {
    PG_ASSIGN_OR_RETURN(*dev, Matrix(*host));
  }
  for (const auto& [host, dev] : stacks) {
    PG_ASSIGN_OR_RETURN(*dev, Stack(*host));
  }
  return Status::Ok();
}

Status DeviceWeights::UploadMla(const LayerWeights& L, const MlaConfig& m, DeviceLayer* d) {
  const std::tuple<const float*, int64_t, const float**> vectors[] = {{L.q_a_norm, m.q_lora, &d->q_a_norm},
                                                                      {L.kv_a_norm, m.kv_lora, &d->kv_a_norm},
                                                                      {L.ix_k_norm, m.index_dim, &d->ix_k_norm},
                                                                      {L.ix_k_norm_b, m.index_dim, &d->ix_k_norm_b}};
  const std::pair<const WeightMatrix*, DeviceMatrix*> matrices[] = {{&L.wq_a, &d->wq_a},   {&L.wq_b, &d->wq_b},
                                                                    {&L.wkv_a, &d->wkv_a}, {&L.ix_q_b, &d->ix_q_b},
                                                                    {&L.ix_k, &d->ix_k},   {&L.ix_proj, &d->ix_proj}};
  for (const auto& [host, n, dev] : vectors) {
    PG_ASSIGN_OR_RETURN(*dev, Vector(host, n));
  }
  for (const auto& [host, dev] : matrices) {
    PG_ASSIGN_OR_RETURN(*dev, Matrix(*host));
  }
  PG_ASSIGN_OR_RETURN(d->wk_b, Stack(L.wk_b));
  PG_ASSIGN_OR_RETURN(d->wv_b, Stack(L.wv_b));
  return Status::Ok();
}

Result<std::unique_ptr<DeviceWeights>> DeviceWeights::Upload(const ModelSource& file, const ModelConfig& c) {
  PG_ASSIGN_OR_RETURN(std::unique_ptr<ModelWeights> w, ModelWeights::Load(file, c, /*repack=*/false));
  std::unique_ptr<DeviceWeights> d(new DeviceWeights());
  PG_ASSIGN_OR_RETURN(d->token_embd, d->Matrix(w->token_embd, 1, 0, /*keep_fp8=*/false));
  PG_ASSIGN_OR_RETURN(d->output, d->Matrix(w->output));
  PG_ASSIGN_OR_RETURN(d->output_norm, d->Vector(w->output_norm, c.n_embd));
  const std::vector<float> inv_freq = w->InvFreq(c);
  PG_ASSIGN_OR_RETURN(d->inv_freq, d->Vector(inv_freq.data(), static_cast<int64_t>(inv_freq.size())));
  if (c.mla.enabled) {
    const size_t bytes = c.mla.inv_freq.size() * sizeof(double);
    PG_ASSIGN_OR_RETURN(void* p, d->Alloc(bytes));
    if (gpuMemcpy(p, c.mla.inv_freq.data(), bytes, gpuMemcpyHostToDevice) != gpuSuccess)
      return Internal("device executor: upload failed");
    d->mla_inv_freq = static_cast<const double*>(p);
  }
  d->layers.resize(w->layers.size());
  for (size_t l = 0; l < w->layers.size(); ++l) {
    PG_RETURN_IF_ERROR(d->UploadLayer(w->layers[l], &d->layers[l]));
    if (c.mla.enabled) PG_RETURN_IF_ERROR(d->UploadMla(w->layers[l], c.mla, &d->layers[l]));
    // q/k norm vectors are head_dim long.
    PG_ASSIGN_OR_RETURN(d->layers[l].q_norm, d->Vector(w->layers[l].q_norm, c.head_dim));
    PG_ASSIGN_OR_RETURN(d->layers[l].k_norm, d->Vector(w->layers[l].k_norm, c.head_dim));
  }
  for (const auto& [type, n] : d->converted_by_type_)
    PG_LOG_INFO(
        "device executor: {} matrices of type {} dequantized to BF16 at load (the kernels decode F16, BF16, "
        "Q8_0, Q4_K and Q6_K, and FP8 E4M3 except in the token embedding)",
        n, TypeName(static_cast<GgmlType>(type)));
  return d;
}

}  // namespace pg::gpu
