#include "gpu/executor/device_executor.h"

#include <fmt/format.h>

#include <algorithm>

#include "base/log.h"
#include "gpu/executor/device_arena.h"
#include "gpu/executor/device_check.h"
#include "gpu/kernels/elementwise.h"
#include "gpu/kernels/fp8_matmul.h"
#include "gpu/kernels/mla_rows.h"

namespace pg::gpu {

namespace {

// The dense matrices Products may run as a bf16 GEMM.
template <typename F>
void ForEachDenseMatrix(const DeviceWeights& w, F&& f) {
  for (const DeviceLayer& L : w.layers)
    for (const DeviceMatrix* m : {&L.wq, &L.wk, &L.wv, &L.wo, &L.gate, &L.up, &L.down, &L.gate_shexp, &L.up_shexp,
                                  &L.down_shexp, &L.wq_a, &L.wq_b, &L.wkv_a})
      if (m->rows > 0) f(*m);
}

}  // namespace

Result<std::unique_ptr<DeviceExecutor>> DeviceExecutor::Create(const Model& model, const DeviceOptions& options) {
  const int device = options.device;
  if (options.gemm_min_tokens < 0) return InvalidArgument("device executor: gemm_min_tokens < 0");
  if (options.fp8_gemm && options.gemm_min_tokens == 0)
    return InvalidArgument("device executor: fp8_gemm needs gemm_min_tokens > 0");
  int n = 0;
  if (gpuGetDeviceCount(&n) != gpuSuccess || n <= 0) {
    (void)gpuGetLastError();
    return Unavailable(fmt::format("--device: no GPU device found (GPU backend compiled: {})", PG_GPU_VENDOR));
  }
  if (device < 0 || device >= n)
    return InvalidArgument(fmt::format("--device cuda:{}: only {} GPU device(s) (0..{})", device, n, n - 1));
  PG_GPU_TRY(gpuSetDevice(device));
  PG_ASSIGN_OR_RETURN(std::unique_ptr<DeviceWeights> w, DeviceWeights::Upload(model.source(), model.config()));
  std::unique_ptr<DeviceExecutor> e(new DeviceExecutor(model, std::move(w), options));
  PG_GPU_TRY(gpuStreamCreate(&e->stream_));
  if (options.gemm_min_tokens > 0) {
    int64_t elems = 0;
    ForEachDenseMatrix(*e->w_, [&](const DeviceMatrix& m) {
      elems = std::max(elems, m.rows * m.cols);
      e->gemm_cols_ = std::max(e->gemm_cols_, m.cols);
      e->gemm_rows_ = std::max(e->gemm_rows_, m.rows);
    });
    PG_GPU_TRY(gpuMalloc(&e->gemm_w_, static_cast<size_t>(std::max<int64_t>(elems, 1)) * 2));
  }
  PG_LOG_INFO(
      "device executor: {} device {}: weights {:.1f} MiB on the device ({} matrices converted to BF16); "
      "arithmetic {}",
      PG_GPU_VENDOR, device, static_cast<double>(e->w_->bytes()) / (1 << 20), e->w_->converted(), e->arithmetic());
  return e;
}

DeviceExecutor::~DeviceExecutor() {
  (void)gpuSetDevice(device_);
  if (stream_) (void)gpuStreamSynchronize(stream_);
  (void)gpuFree(scratch_);
  (void)gpuFree(gemm_w_);
  (void)gpuFreeHost(staging_);
  (void)gpuFreeHost(host_logits_);
  if (stream_) (void)gpuStreamDestroy(stream_);
}

std::string DeviceExecutor::arithmetic() const {
#if defined(PROSGROW_GPU_EMULATED)
  const std::string base = "cuda-emu-f32";
#else
  const std::string base = std::string(PG_GPU_VENDOR) + "-f32";
#endif
  if (options_.gemm_min_tokens == 0) return base;
  return base + (options_.fp8_gemm ? "+fp8gemm" : "+bf16gemm");
}

Status DeviceExecutor::Prepare(const KvPages& pages) {
  const ModelConfig& c = model_.config();
  const size_t bytes = pages.layout.block_bytes();
  const KvLayout& lay = pages.layout;
  if (pages.kv_dim() != c.kv_dim() || lay.n_layers != c.n_layer || lay.kind != c.attention_kind() ||
      lay.n_index_layers != c.mla.n_index_layers() || (lay.n_index_layers > 0 && lay.index_dim != c.mla.index_dim))
    return InvalidArgument("device executor: KV pages of another model's shape");
  if (pages.dtype() == KvDtype::kF32 && !c.mla.enabled)
    return InvalidArgument("device executor: f32 KV pages are for MLA models only");
  if (!DeviceBlockArena::Contains(pages.base, bytes))
    return InvalidArgument(
        "device executor: the KV cache's device tier is not in device memory (give the cache "
        "a DeviceBlockArena)");
  kv_.base = pages.base;
  kv_.block_bytes = static_cast<int64_t>(pages.block_bytes);
  kv_.n_kv_heads = pages.layout.n_kv_heads;
  kv_.head_dim = pages.layout.head_dim;
  kv_.page_tokens = pages.layout.page_tokens;
  kv_.bf16 = pages.dtype() == KvDtype::kBF16;
  kv_.f32 = pages.dtype() == KvDtype::kF32;
  kv_.rows_per_layer = static_cast<int32_t>(lay.rows_per_layer());
  kv_.n_layers = lay.n_layers;
  kv_.index_dim = lay.index_dim;
  return Status::Ok();
}

Status DeviceExecutor::Validate(std::span<const BatchSeq> batch, int64_t* n_tok, int64_t* n_logits,
                                int64_t* n_table) const {
  const ModelConfig& c = model_.config();
  *n_tok = *n_logits = *n_table = 0;
  for (const BatchSeq& b : batch) {
    if (b.n_tokens <= 0) return InvalidArgument("forward: a sequence has no new tokens");
    const int64_t end = b.start_pos + b.n_tokens;
    if (b.start_pos < 0 || b.n_blocks * kv_.page_tokens < end)
      return InvalidArgument(fmt::format("forward: block table of {} pages cannot hold {} positions", b.n_blocks, end));
    for (int64_t i = 0; i < b.n_tokens; ++i)
      if (b.tokens[i] < 0 || b.tokens[i] >= c.n_vocab)
        return InvalidArgument(
            fmt::format("forward: token id {} outside the vocabulary of {}", b.tokens[i], c.n_vocab));
    *n_tok += b.n_tokens;
    *n_logits += b.logit_rows();
    *n_table += b.n_blocks;
  }
  return Status::Ok();
}

namespace {

using Parts = std::vector<std::pair<void**, int64_t>>;  // buffer, 4-byte elements

template <typename T>
void Add(Parts& p, T** buf, int64_t n) {
  p.emplace_back(reinterpret_cast<void**>(buf), std::max<int64_t>(n, 1));
}
size_t Rounded(int64_t n) { return (static_cast<size_t>(n) * 4 + 255) / 256 * 256; }

// Re-allocates pinned host memory of n elements when *cap is smaller.
template <typename T>
Status GrowPinned(T** p, size_t* cap, size_t n) {
  if (n <= *cap) return Status::Ok();
  (void)gpuFreeHost(*p);
  *p = nullptr;
  *cap = 0;
  PG_GPU_TRY(gpuMallocHost(p, n * sizeof(T)));
  *cap = n;
  return Status::Ok();
}

}  // namespace

// Carves the step's device buffers from one allocation, grown when a step is
// larger than any before (then every buffer moves; nothing is kept across steps).
Status DeviceExecutor::Reserve(int64_t T, int64_t L, int64_t NB, int64_t ctx) {
  const ModelConfig& c = model_.config();
  cap_T_ = std::max(T, cap_T_), cap_L_ = std::max({L, cap_L_, int64_t{1}}), cap_NB_ = std::max(NB, cap_NB_);
  cap_ctx_ = std::max(ctx, cap_ctx_);
  const int64_t cT = cap_T_, cL = cap_L_, cInts = 5 * cT + cL + cap_NB_;
  const int64_t ff = std::max(c.n_ff, c.moe.n_shared * c.moe.n_ff_exp);
  Step& s = step_;
  Parts parts;
  Add(parts, &s.x, cT * c.n_embd), Add(parts, &s.h, cT * c.n_embd), Add(parts, &s.q, cT * c.q_dim());
  Add(parts, &s.k, cT * c.kv_dim()), Add(parts, &s.v, cT * c.kv_dim()), Add(parts, &s.attn, cT * c.q_dim());
  Add(parts, &s.proj, cT * c.n_embd), Add(parts, &s.gate, cT * ff), Add(parts, &s.up, cT * ff);
  Add(parts, &s.ffn, cT * c.n_embd), Add(parts, &s.last, cL * c.n_embd), Add(parts, &s.logits, cL * c.n_vocab);
  Add(parts, &s.ints, cInts);
  if (gemm_w_) Add(parts, &s.x16, (cT * gemm_cols_ + 1) / 2);  // bf16: two per 4-byte element
  s.fp8_bytes = options_.fp8_gemm ? Fp8GemmScratchBytes(cT, gemm_cols_, gemm_rows_) : 0;
  if (s.fp8_bytes) Add(parts, &s.fp8, static_cast<int64_t>((s.fp8_bytes + 3) / 4));
  if (c.is_moe()) {
    const int64_t cTK = cT * c.moe.n_expert_used;
    Add(parts, &s.router, cT * c.moe.n_expert), Add(parts, &s.route_w, cTK), Add(parts, &s.xg, cTK * c.n_embd);
    Add(parts, &s.gg, cTK * c.moe.n_ff_exp), Add(parts, &s.ug, cTK * c.moe.n_ff_exp);
    Add(parts, &s.yg, cTK * c.n_embd), Add(parts, &s.experts, cTK), Add(parts, &s.offsets, c.moe.n_expert + 1);
    Add(parts, &s.row_token, cTK), Add(parts, &s.slot_row, cTK);
  }
  for (const auto& part : MlaParts(cT, cap_ctx_)) parts.push_back(part);
  size_t bytes = 0;
  for (const auto& part : parts) bytes += Rounded(part.second);
  if (bytes > scratch_bytes_) {
    PG_GPU_TRY(gpuStreamSynchronize(stream_));
    (void)gpuFree(scratch_);
    scratch_ = nullptr;
    scratch_bytes_ = 0;
    PG_GPU_TRY(gpuMalloc(&scratch_, bytes));
    scratch_bytes_ = bytes;
  }
  auto* at = static_cast<uint8_t*>(scratch_);
  for (const auto& [p, n] : parts) *p = at, at += Rounded(n);
  s.T = T, s.L = L, s.NB = NB;
  s.ids = s.ints, s.pos = s.ids + T, s.slots = s.pos + T, s.table_off = s.slots + T, s.n_keys = s.table_off + T;
  s.logit_rows = s.n_keys + T, s.tables = s.logit_rows + L;
  PG_RETURN_IF_ERROR(GrowPinned(&staging_, &staging_ints_, static_cast<size_t>(cInts)));
  return GrowPinned(&host_logits_, &host_logits_floats_, static_cast<size_t>(cL * c.n_vocab));
}

void DeviceExecutor::Stage(std::span<const BatchSeq> batch) {
  const int64_t T = step_.T, L = step_.L, P = kv_.page_tokens;
  int32_t* ids = staging_;
  int32_t *pos = ids + T, *slots = pos + T, *table_off = slots + T, *n_keys = table_off + T;
  int32_t *logit_rows = n_keys + T, *tables = logit_rows + L;
  int64_t t = 0, li = 0, tb = 0;
  for (const BatchSeq& b : batch) {
    for (int64_t i = 0; i < b.n_blocks; ++i) tables[tb + i] = b.block_table[i];
    for (int64_t i = 0; i < b.n_tokens; ++i, ++t) {
      const int64_t p = b.start_pos + i;
      ids[t] = b.tokens[i];
      pos[t] = static_cast<int32_t>(p);
      slots[t] = static_cast<int32_t>(b.block_table[p / P] * P + p % P);
      table_off[t] = static_cast<int32_t>(tb);
      n_keys[t] = static_cast<int32_t>(p + 1);  // causal: keys [0, p]
      if (i >= b.n_tokens - b.logit_rows()) logit_rows[li++] = static_cast<int32_t>(t);
    }
    tb += b.n_blocks;
  }
}

Result<LogitsRows> DeviceExecutor::Forward(std::span<const BatchSeq> batch) {
  const ModelConfig& c = model_.config();
  if (kv_.base == nullptr) return Internal("device executor: Forward before Prepare");
  int64_t T = 0, L = 0, NB = 0;
  PG_RETURN_IF_ERROR(Validate(batch, &T, &L, &NB));
  LogitsRows out;
  out.n_vocab = c.n_vocab;
  out.rows = L;
  if (T == 0) return out;
  PG_GPU_TRY(gpuSetDevice(device_));
  int64_t ctx = 0;  // the step's most causal keys
  for (const BatchSeq& b : batch) ctx = std::max(ctx, b.start_pos + b.n_tokens);
  PG_RETURN_IF_ERROR(Reserve(T, L, NB, ctx));
  Stage(batch);
  PG_GPU_TRY(
      gpuMemcpyAsync(step_.ints, staging_, static_cast<size_t>(5 * T + L + NB) * 4, gpuMemcpyHostToDevice, stream_));
  if (c.mla.enabled)
    PG_GPU_TRY(MlaCosSin(w_->mla_inv_freq, c.mla.rope_mag, c.mla.rope, step_.pos, T, mla_.cos, mla_.sin, stream_));
  PG_GPU_TRY(GetRows(w_->token_embd.type, w_->token_embd.data, w_->token_embd.row_bytes, c.n_embd, step_.ids, T,
                     step_.x, stream_));
  PG_GPU_TRY(RmsNormResidual(step_.x, nullptr, w_->layers[0].attn_norm, step_.h, T, c.n_embd, c.rms_eps, stream_));
  for (int64_t l = 0; l < c.n_layer; ++l) PG_RETURN_IF_ERROR(Layer(l));
  if (L > 0) PG_RETURN_IF_ERROR(Logits());
  PG_GPU_TRY(gpuStreamSynchronize(stream_));
  PG_GPU_TRY(gpuGetLastError());
  out.data = host_logits_;
  return out;
}

}  // namespace pg::gpu
