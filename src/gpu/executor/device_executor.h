// DeviceExecutor: the Executor (engine/executor.h) of the GPU backend. The
// same source builds for -DPROSGROW_GPU=cuda, hip and emulated (the kernels of
// src/gpu/kernels run on the CPU under the emulator).
//
//   Create   uploads the weights once (DeviceWeights) and makes its stream.
//   Prepare  takes the device tier's pages; they must be device memory made
//            by DeviceBlockArena (device_arena.h), else it refuses.
//   Forward  one step: the batch's token ids, positions, K/V slots and block
//            tables go up in one copy from pinned staging; then per layer
//            RMSNorm (fused with the residual add), the q/k/v products
//            (MatMul: f32 activations, the weights decoded in the kernel),
//            biases, q/k norm, RoPE, K/V rows into the pages through the
//            block tables, paged attention, the output product, the SwiGLU
//            FFN or the MoE experts (router, sort by expert, grouped products,
//            weighted combine, shared expert); the final norm and the output
//            product on the logit rows only, copied into pinned host memory;
//            it waits on the stream before returning. MLA models (deepseek2,
//            glm-dsa) run MlaAttention instead of the q/k/v attention
//            (device_mla_layer.cc): latent rows and DSA indexer keys in the
//            pages, the indexer's top-k, sparse attention over the chosen rows.
//
// Arithmetic (arithmetic()): "<vendor>-f32", vendor cuda / hip, or
// "cuda-emu-f32" for the emulated build (the same kernels, the host's libm);
// "+bf16gemm" appended when DeviceOptions::gemm_min_tokens is set ("+fp8gemm"
// with fp8_gemm).
// It differs from the CPU's (which rounds activations to Q8_0 / f16 before
// its products), so its K/V never share disk / Redis keys with the CPU's.
// --attn is not applied: attention is always the f32 online softmax of
// PagedAttention (q rounded to f16 for f16 KV, as the CPU's default).
//
// Thread-safety: one caller at a time (the engine thread).
#pragma once

#include <cstdint>
#include <initializer_list>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "engine/executor.h"
#include "gpu/executor/device_options.h"
#include "gpu/executor/device_weights.h"
#include "gpu/kernels/kv_pages.cuh"
#include "gpu/runtime/gpu_vendor.h"
#include "model/model.h"

namespace pg::gpu {

class DeviceExecutor final : public Executor {
 public:
  // Fails with a one-line error without a device (options.device) or when the
  // weights do not fit.
  static Result<std::unique_ptr<DeviceExecutor>> Create(const Model& model, const DeviceOptions& options);
  ~DeviceExecutor() override;

  std::string arithmetic() const override;
  Status Prepare(const KvPages& pages) override;
  Result<LogitsRows> Forward(std::span<const BatchSeq> batch) override;

  const DeviceWeights& weights() const { return *w_; }

 private:
  // Device scratch of one step, carved from one allocation (Reserve).
  struct Step {
    int64_t T = 0, L = 0, NB = 0;  // tokens, logit rows, block-table entries
    float *x = nullptr, *h = nullptr, *q = nullptr, *k = nullptr, *v = nullptr, *attn = nullptr;
    float *proj = nullptr, *gate = nullptr, *up = nullptr, *ffn = nullptr, *last = nullptr, *logits = nullptr;
    // MoE (null for dense models)
    float *router = nullptr, *route_w = nullptr, *xg = nullptr, *gg = nullptr, *ug = nullptr, *yg = nullptr;
    int32_t *experts = nullptr, *offsets = nullptr, *row_token = nullptr, *slot_row = nullptr;
    // Uploaded per step (the same order as the host staging): T ids, T
    // positions, T slots, T table offsets, T key counts, L logit rows, NB table entries.
    int32_t *ints = nullptr, *ids = nullptr, *pos = nullptr, *slots = nullptr, *table_off = nullptr;
    int32_t *n_keys = nullptr, *logit_rows = nullptr, *tables = nullptr;
    uint16_t* x16 = nullptr;  // a product's activations in bf16 (gemm_min_tokens > 0)
    uint8_t* fp8 = nullptr;   // GemmFp8's scratch (fp8_gemm), fp8_bytes long
    size_t fp8_bytes = 0;
  };
  // MLA scratch of one step (null for other models; device_mla_layer.cc).
  struct MlaStep {
    float *qa = nullptr, *q = nullptr, *kv = nullptr, *qabs = nullptr, *o = nullptr, *av = nullptr;
    float *ik = nullptr, *iw = nullptr, *iq = nullptr, *scores = nullptr, *cos = nullptr, *sin = nullptr;
    int32_t *sel = nullptr, *sel_n = nullptr;  // the last full indexer layer's choice (shared layers reuse it)
    int64_t ld = 0;                            // scores' row stride: the step's most causal keys
  };

  DeviceExecutor(const Model& model, std::unique_ptr<DeviceWeights> w, const DeviceOptions& o)
      : model_(model), w_(std::move(w)), options_(o), device_(o.device) {}
  Status Validate(std::span<const BatchSeq> batch, int64_t* n_tok, int64_t* n_logits, int64_t* n_table) const;
  Status Reserve(int64_t T, int64_t L, int64_t NB, int64_t ctx);
  // The MLA buffers' sizes in 4-byte elements, in MlaStep's order (0: not an MLA model).
  std::vector<std::pair<void**, int64_t>> MlaParts(int64_t T, int64_t ctx);
  void Stage(std::span<const BatchSeq> batch);  // fills staging_ for step_
  Status Layer(int64_t l);
  // For each (W, y) of outs: y (T, W.rows) = x (T, W.cols) * W^T, all dense
  // and of the same cols: bf16 GEMMs for a step of options_.gemm_min_tokens
  // or more (x rounded to bf16 once for all of them), else MatMul.
  using ProductOut = std::pair<const DeviceMatrix*, float*>;
  Status Products(const float* x, std::initializer_list<ProductOut> outs);
  Status Attention(int64_t l);     // multi-head (GQA) attention: step_.proj
  Status MlaAttention(int64_t l);  // multi-head latent attention (+ DSA indexer): step_.proj
  Status MlaIndexer(int64_t l, int64_t index_slot);
  Status DenseFfn(const DeviceMatrix& gate, const DeviceMatrix& up, const DeviceMatrix& down, float* out);
  Status MoeFfn(const DeviceLayer& L);
  Status Logits();

  const Model& model_;
  std::unique_ptr<DeviceWeights> w_;
  DeviceOptions options_;
  int device_ = 0;  // set on every Forward: the current device is per host thread
  gpuStream_t stream_{};
  DeviceKvPages kv_;
  Step step_;
  MlaStep mla_;
  void* scratch_ = nullptr;     // device
  uint16_t* gemm_w_ = nullptr;  // device: the largest dense matrix in bf16 (gemm_min_tokens > 0)
  int64_t gemm_cols_ = 0;       // the widest dense matrix's cols (x16 holds cap_T_ rows of it)
  int64_t gemm_rows_ = 0;       // the tallest dense matrix's rows (GemmFp8's padded output)
  size_t scratch_bytes_ = 0;
  int32_t* staging_ = nullptr;  // pinned host: the step's ints
  size_t staging_ints_ = 0;
  float* host_logits_ = nullptr;  // pinned host: (L, n_vocab)
  size_t host_logits_floats_ = 0;
  int64_t cap_T_ = -1, cap_L_ = -1, cap_NB_ = -1, cap_ctx_ = -1;
};

}  // namespace pg::gpu
