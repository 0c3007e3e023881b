#include "model/model.h"

#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

#include "backend/cpu/matmul_precise.h"
#include "backend/cpu/quant.h"
#include "backend/cpu/vec_ops.h"
#include "base/check.h"
#include "model/attention.h"

namespace pg {
namespace {

constexpr int64_t kMaxGroupQueries = 64;  // queries (rows x heads) per AttendGroup call
constexpr int64_t kMaxRowsPerTask = 4;    // rows of one sequence sharing a K/V tile pass
// Per-row work (norms, residual adds, q/k finishing) on up to this many
// elements in all runs on the calling thread: for a decode step's few rows a
// parallel region (fork, join, the slower thread's tail) costs more than the
// work. Rows are independent, so the bits are the same either way.
constexpr int64_t kSerialRowElems = 1 << 13;

template <typename Fn>
void ForEachRow(ThreadPool& pool, int64_t n_rows, int64_t row_elems, Fn&& fn) {
  if (n_rows * row_elems <= kSerialRowElems) {
    for (int64_t t = 0; t < n_rows; ++t) fn(t);
  } else {
    pool.ParallelFor(n_rows, fn);
  }
}

}  // namespace

void ForwardScratch::Reserve(const ModelConfig& c, int64_t n_tokens, int64_t n_logits, int64_t max_ctx, int n_threads) {
  if (n_tokens > cap_tokens_) {
    size_t T = static_cast<size_t>(n_tokens);
    x_.resize(T * c.n_embd);
    h_.resize(T * c.n_embd);
    q_.resize(T * c.q_dim());
    k_.resize(T * c.kv_dim());
    v_.resize(T * c.kv_dim());
    attn_.resize(T * c.q_dim());
    gate_.resize(T * c.n_ff);
    up_.resize(T * c.n_ff);
    ffn_out_.resize(T * c.n_embd);
    cos_.resize(T * c.n_rot / 2);
    sin_.resize(T * c.n_rot / 2);
    tok_seq_.resize(T);
    tok_pos_.resize(T);
    tok_id_.resize(T);
    mm_.Reserve(std::max({c.n_embd, c.n_ff, c.q_dim(), c.moe.n_ff_exp * std::max<int64_t>(1, c.moe.n_shared)}),
                n_tokens);
    moe_.Reserve(c, n_tokens, n_threads);
    cap_tokens_ = n_tokens;
  }
  if (n_logits > cap_logits_) {
    last_.resize(static_cast<size_t>(n_logits * c.n_embd));
    cap_logits_ = n_logits;
  }
  if (max_ctx > cap_ctx_ || n_threads > cap_threads_) {
    cap_ctx_ = std::max(cap_ctx_, max_ctx);
    cap_threads_ = std::max(cap_threads_, n_threads);
    scores_stride_ = AttendGroupScratchFloats(c.head_dim, kMaxGroupQueries, cap_ctx_);
    scores_.resize(scores_stride_ * static_cast<size_t>(cap_threads_));
  }
  if (c.mla.enabled) mla_.Reserve(c, n_tokens, max_ctx, n_threads);
}

Result<std::unique_ptr<Model>> Model::Load(const std::string& path, const ModelOptions& options) {
  PG_ASSIGN_OR_RETURN(std::shared_ptr<const ModelSource> source, OpenModelSource(path));
  return Load(std::move(source), options);
}

Result<std::unique_ptr<Model>> Model::Load(std::shared_ptr<const GgufFile> file, const ModelOptions& options) {
  PG_CHECK(file != nullptr);
  return Load(std::make_shared<const GgufModelSource>(std::move(file)), options);
}

Result<std::unique_ptr<Model>> Model::Load(std::shared_ptr<const ModelSource> source, const ModelOptions& options) {
  PG_CHECK(source != nullptr);
  std::unique_ptr<Model> m(new Model());
  m->options_ = options;
  if (options.attention == AttentionMode::kPrecise) return InvalidArgument("model: use ModelOptionsFor(kPrecise)");
  if (options.precise_matmul && options.repack_weights)
    return InvalidArgument("model: precise products need row-major weights (repack_weights off)");
  m->source_ = std::move(source);
  PG_ASSIGN_OR_RETURN(m->config_, m->source_->Config());
  PG_ASSIGN_OR_RETURN(m->weights_, ModelWeights::Load(*m->source_, m->config_, options.repack_weights));
  const ModelConfig& c = m->config_;
  m->inv_freq_ = m->weights_->InvFreq(c);

  // Identity: FNV-1a over the config summary, tensor names/types/offsets and the file size.
  uint64_t h = 1469598103934665603ull;
  auto mix = [&](const void* p, size_t n) {
    const auto* b = static_cast<const uint8_t*>(p);
    for (size_t i = 0; i < n; ++i) h = (h ^ b[i]) * 1099511628211ull;
  };
  std::string summary = c.Summary();
  mix(summary.data(), summary.size());
  // The storage format (GGUF identities predate it and stay as they were).
  const std::string format = m->source_->format();
  if (format != "gguf") mix(format.data(), format.size());
  for (const auto& t : m->source_->tensors()) {
    mix(t.name.data(), t.name.size());
    mix(&t.type, sizeof t.type);
    mix(&t.offset, sizeof t.offset);
    // A sample of the bytes, so two files with equal layout but different weights differ.
    mix(t.data, std::min<uint64_t>(t.n_bytes, 64));
  }
  uint64_t size = m->source_->size_bytes();
  mix(&size, sizeof size);
  m->identity_ = fmt::format("{}-{:016x}", c.arch, h);
  if (options.attention == AttentionMode::kTiledF32) m->identity_ += "-attn-f32tiled";
  if (options.precise_matmul) m->identity_ += "-precise";
  // Repacked Q8_0 sums blocks differently, so its K/V are not those of the
  // row-major kernels. (Half4 F16/BF16 gives row-major bits; one suffix for
  // any repack keeps the rule simple.)
  if (m->weights_->repacked_bytes() > 0) m->identity_ += "-repacked";
  // What a token caches: MLA latent rows (and DSA indexer keys), not K/V.
  if (c.mla.enabled) m->identity_ += c.mla.sparse() ? "-kind-mla-dsa" : "-kind-mla";
  // Repacked expert stacks (Q4_Kx8 ...) change the MoE layers' bits too;
  // builds before them kept experts row-major under the same suffix.
  for (const LayerWeights& L : m->weights_->layers)
    if (L.gate_exps.n_expert > 0 && L.gate_exps.first.layout != WeightLayout::kRowMajor) {
      m->identity_ += "-experts";
      break;
    }
  return m;
}

Status Model::Forward(std::span<const BatchSeq> batch, const KvPages& kv, ThreadPool& pool, ForwardScratch& s,
                      float* logits) const {
  PG_ASSIGN_OR_RETURN(const BatchTotals n, CheckForwardBatch(batch, kv.page_tokens(), config_.n_vocab, "forward"));
  if (n.n_tok == 0) return Status::Ok();
  PG_RETURN_IF_ERROR(CheckKvPagesFor(config_, kv, "forward"));
  if (kv.dtype() == KvDtype::kF32 && !config_.mla.enabled)
    return InvalidArgument("forward: f32 KV pages are for MLA models only");
  s.Reserve(config_, n.n_tok, n.n_logits, n.max_ctx, pool.size());

  Embed(batch, n.n_tok, pool, s);
  const MlaStep step =
      MakeMlaStep(batch, kv, n.n_tok, s.tok_seq_.data(), s.tok_pos_.data(), s.cos_.data(), s.sin_.data(), options_);
  for (int64_t l = 0; l < config_.n_layer; ++l) {
    if (config_.mla.enabled)
      MlaAttentionLayer(config_, weights_->layers[static_cast<size_t>(l)], l, step, s.x_.data(), s.h_.data(), pool,
                        s.mla_, s.mm_);
    else
      AttentionBlock(l, batch, kv, n.n_tok, pool, s);
    FfnBlock(l, n.n_tok, pool, s);
  }
  if (n.n_logits == 0) return Status::Ok();
  OutputLogits(batch, n.n_logits, pool, s, logits);
  return Status::Ok();
}

Result<BatchTotals> CheckForwardBatch(std::span<const BatchSeq> batch, int64_t page_tokens, int64_t n_vocab,
                                      std::string_view who) {
  BatchTotals n;
  for (const BatchSeq& b : batch) {
    if (b.n_tokens <= 0) return InvalidArgument(fmt::format("{}: a sequence has no new tokens", who));
    int64_t end = b.start_pos + b.n_tokens;
    if (b.start_pos < 0 || b.n_blocks * page_tokens < end)
      return InvalidArgument(fmt::format("{}: block table of {} pages cannot hold {} positions", who, b.n_blocks, end));
    for (int64_t i = 0; i < b.n_tokens; ++i)
      if (b.tokens[i] < 0 || b.tokens[i] >= n_vocab)
        return InvalidArgument(fmt::format("{}: token id {} outside the vocabulary of {}", who, b.tokens[i], n_vocab));
    n.n_tok += b.n_tokens;
    n.n_logits += b.logit_rows();
    n.max_ctx = std::max(n.max_ctx, end);
  }
  return n;
}

Status CheckKvPagesFor(const ModelConfig& c, const KvPages& kv, std::string_view who) {
  if (kv.kv_dim() != c.kv_dim()) return InvalidArgument(fmt::format("{}: KV pages have the wrong row size", who));
  if (kv.layout.kind != c.attention_kind() || kv.layout.n_index_layers != c.mla.n_index_layers() ||
      (kv.layout.n_index_layers > 0 && kv.layout.index_dim != c.mla.index_dim))
    return InvalidArgument(
        fmt::format("{}: KV pages have the wrong attention kind or indexer keys for this model", who));
  return Status::Ok();
}

void FillTokenTables(std::span<const BatchSeq> batch, int32_t* tok_seq, int64_t* tok_pos, int32_t* tok_id) {
  int64_t t = 0;
  for (size_t si = 0; si < batch.size(); ++si)
    for (int64_t i = 0; i < batch[si].n_tokens; ++i, ++t) {
      tok_seq[t] = static_cast<int32_t>(si);
      tok_pos[t] = batch[si].start_pos + i;
      tok_id[t] = batch[si].tokens[i];
    }
}

MlaStep MakeMlaStep(std::span<const BatchSeq> batch, const KvPages& kv, int64_t n_tok, const int32_t* tok_seq,
                    const int64_t* tok_pos, const float* cos, const float* sin, const ModelOptions& o) {
  return MlaStep{batch, &kv, n_tok, tok_seq, tok_pos, cos, sin, o.precise_matmul, o.sparse_attention};
}

void Model::Embed(std::span<const BatchSeq> batch, int64_t n_tok, ThreadPool& pool, ForwardScratch& s) const {
  const ModelConfig& c = config_;
  const ModelWeights& w = *weights_;
  const int64_t D = c.n_embd, R2 = c.n_rot / 2;
  FillTokenTables(batch, s.tok_seq_.data(), s.tok_pos_.data(), s.tok_id_.data());
  ForEachRow(pool, n_tok, D, [&](int64_t t) {
    const auto* row = static_cast<const uint8_t*>(w.token_embd.data) + s.tok_id_[t] * w.token_embd.row_bytes;
    (void)DequantizeRow(w.token_embd.type, row, &s.x_[t * D], D);
    if (c.mla.enabled)
      MlaCosSin(c.mla, s.tok_pos_[t], &s.cos_[t * R2], &s.sin_[t * R2]);
    else
      RopeCosSin(inv_freq_.data(), c.n_rot, s.tok_pos_[t], &s.cos_[t * R2], &s.sin_[t * R2]);
  });
}

void Model::Rope(float* x, int64_t n_heads, int64_t t, const ForwardScratch& s) const {
  const ModelConfig& c = config_;
  const int64_t HD = c.head_dim, R2 = c.n_rot / 2;
  if (c.rope_style == RopeStyle::kNorm)
    RopeNorm(x, n_heads, HD, c.n_rot, &s.cos_[t * R2], &s.sin_[t * R2]);
  else
    RopeNeox(x, n_heads, HD, c.n_rot, &s.cos_[t * R2], &s.sin_[t * R2]);
}

void Model::AttentionBlock(int64_t l, std::span<const BatchSeq> batch, const KvPages& kv, int64_t n_tok,
                           ThreadPool& pool, ForwardScratch& s) const {
  const ModelConfig& c = config_;
  const LayerWeights& L = weights_->layers[static_cast<size_t>(l)];
  const int64_t D = c.n_embd, QD = c.q_dim(), KVD = c.kv_dim();
  ForEachRow(pool, n_tok, D, [&](int64_t t) { RmsNorm(&s.x_[t * D], L.attn_norm, &s.h_[t * D], D, c.rms_eps); });
  const MatMulOut qkv[3] = {{&L.wq, s.q_.data(), QD}, {&L.wk, s.k_.data(), KVD}, {&L.wv, s.v_.data(), KVD}};
  Products(qkv, 3, s.h_.data(), n_tok, pool, s);
  ForEachRow(pool, n_tok, QD + 2 * KVD, [&](int64_t t) { FinishQkvRow(l, batch, kv, t, s); });
  Attention(l, batch, kv, n_tok, pool, s);
  const MatMulOut wo{&L.wo, s.h_.data(), D};
  Products(&wo, 1, s.attn_.data(), n_tok, pool, s);
  ForEachRow(pool, n_tok, D, [&](int64_t t) { AddInPlace(&s.x_[t * D], &s.h_[t * D], D); });
}

void Model::FinishQkvRow(int64_t l, std::span<const BatchSeq> batch, const KvPages& kv, int64_t t,
                         ForwardScratch& s) const {
  const ModelConfig& c = config_;
  const LayerWeights& L = weights_->layers[static_cast<size_t>(l)];
  const int64_t QD = c.q_dim(), KVD = c.kv_dim(), HD = c.head_dim;
  float* q = &s.q_[t * QD];
  float* k = &s.k_[t * KVD];
  float* v = &s.v_[t * KVD];
  if (L.bq) {  // the loader guarantees all three or none
    AddInPlace(q, L.bq, QD);
    AddInPlace(k, L.bk, KVD);
    AddInPlace(v, L.bv, KVD);
  }
  if (L.q_norm) {
    for (int64_t h = 0; h < c.n_head; ++h) RmsNorm(q + h * HD, L.q_norm, q + h * HD, HD, c.rms_eps);
    for (int64_t h = 0; h < c.n_head_kv; ++h) RmsNorm(k + h * HD, L.k_norm, k + h * HD, HD, c.rms_eps);
  }
  Rope(q, c.n_head, t, s);
  Rope(k, c.n_head_kv, t, s);
  // Store this token's K/V into its page slot.
  const BatchSeq& b = batch[static_cast<size_t>(s.tok_seq_[t])];
  int64_t pos = s.tok_pos_[t];
  int32_t block = b.block_table[pos / kv.page_tokens()];
  int64_t slot = pos % kv.page_tokens();
  if (kv.dtype() == KvDtype::kF16) {
    StoreRowF16(k, kv.Row(block, l, 0, slot), KVD);
    StoreRowF16(v, kv.Row(block, l, 1, slot), KVD);
  } else {
    StoreRowBF16(k, kv.Row(block, l, 0, slot), KVD);
    StoreRowBF16(v, kv.Row(block, l, 1, slot), KVD);
  }
}

void Model::FfnBlock(int64_t l, int64_t n_tok, ThreadPool& pool, ForwardScratch& s) const {
  const ModelConfig& c = config_;
  const LayerWeights& L = weights_->layers[static_cast<size_t>(l)];
  const int64_t D = c.n_embd;
  ForEachRow(pool, n_tok, D, [&](int64_t t) { RmsNorm(&s.x_[t * D], L.ffn_norm, &s.h_[t * D], D, c.rms_eps); });
  if (c.IsMoeLayer(l)) {
    MoeFfn(c, L, s.h_.data(), n_tok, s.ffn_out_.data(), pool, s.moe_, s.mm_, options_.precise_matmul);
  } else {
    SwiGluFfn(L.gate, L.up, L.down, s.h_.data(), n_tok, s.gate_.data(), s.up_.data(), s.ffn_out_.data(), pool, s.mm_,
              options_.precise_matmul);
  }
  ForEachRow(pool, n_tok, D, [&](int64_t t) { AddInPlace(&s.x_[t * D], &s.ffn_out_[t * D], D); });
}

void Model::OutputLogits(std::span<const BatchSeq> batch, int64_t n_logits, ThreadPool& pool, ForwardScratch& s,
                         float* logits) const {
  const ModelConfig& c = config_;
  const ModelWeights& w = *weights_;
  const int64_t D = c.n_embd;
  int64_t li = 0, t_end = 0;
  for (const BatchSeq& b : batch) {
    t_end += b.n_tokens;
    for (int64_t t = t_end - b.logit_rows(); t < t_end; ++t, ++li)
      RmsNorm(&s.x_[t * D], w.output_norm, &s.last_[li * D], D, c.rms_eps);
  }
  const MatMulOut out{&w.output, logits, c.n_vocab};
  Products(&out, 1, s.last_.data(), n_logits, pool, s);
}

void Model::Products(const MatMulOut* outs, int n_outs, const float* x, int64_t n_tok, ThreadPool& pool,
                     ForwardScratch& s) const {
  if (options_.precise_matmul)
    MatMulPreciseMany(outs, n_outs, x, n_tok, pool);
  else
    MatMulMany(outs, n_outs, x, n_tok, pool, s.mm_);
}

void Model::Attention(int64_t l, std::span<const BatchSeq> batch, const KvPages& kv, int64_t n_tok, ThreadPool& pool,
                      ForwardScratch& s) const {
  if (options_.attention == AttentionMode::kTiledF32 && kv.dtype() == KvDtype::kF16)
    AttentionGrouped(l, batch, kv, n_tok, pool, s);
  else
    AttentionPerHead(l, batch, kv, n_tok, pool, s);
}

// kLlamaF16 (and bf16 KV): one task per (token row, query head).
void Model::AttentionPerHead(int64_t l, std::span<const BatchSeq> batch, const KvPages& kv, int64_t n_tok,
                             ThreadPool& pool, ForwardScratch& s) const {
  const ModelConfig& c = config_;
  const int64_t HD = c.head_dim, QD = c.q_dim(), group = c.n_head / c.n_head_kv;
  const float scale = 1.0f / std::sqrt(static_cast<float>(HD));
  const int64_t n_tasks = n_tok * c.n_head;
  std::atomic<int64_t> next{0};
  pool.RunOnAll([&](int thread, int) {
    float* scores = &s.scores_[static_cast<size_t>(thread) * s.scores_stride_];
    for (;;) {
      int64_t task = next.fetch_add(1, std::memory_order_relaxed);
      if (task >= n_tasks) break;
      const int64_t t = task / c.n_head, h = task % c.n_head;
      AttentionArgs a;
      a.kv = &kv;
      a.block_table = batch[static_cast<size_t>(s.tok_seq_[t])].block_table;
      a.layer = l;
      a.kv_head = h / group;
      a.head_dim = HD;
      a.n_keys = s.tok_pos_[t] + 1;
      a.scale = scale;
      AttendOne(a, &s.q_[t * QD + h * HD], &s.attn_[t * QD + h * HD], scores);
    }
  });
}

// kTiledF32: one task per (up to kMaxRowsPerTask rows of a sequence, a subset
// of the query heads of one kv head), so each K/V tile is converted once for
// all of them. Rows and heads per task shrink until there are enough tasks to
// keep every thread busy (a single decode row spreads over the kv heads, and
// over their query heads when there are fewer kv heads than threads);
// tasks run largest first. The grouping never changes a row's arithmetic.
void Model::AttentionGrouped(int64_t l, std::span<const BatchSeq> batch, const KvPages& kv, int64_t n_tok,
                             ThreadPool& pool, ForwardScratch& s) const {
  const ModelConfig& c = config_;
  const int64_t HD = c.head_dim, QD = c.q_dim(), group = c.n_head / c.n_head_kv;
  const float scale = 1.0f / std::sqrt(static_cast<float>(HD));
  const int64_t P = pool.size();
  const int64_t units = n_tok * c.n_head_kv;  // (row, kv head) pairs
  int64_t rows = std::clamp<int64_t>(units / (4 * P), 1, kMaxRowsPerTask);
  int64_t heads = std::min(group, kMaxGroupQueries);
  rows = std::max<int64_t>(1, std::min(rows, kMaxGroupQueries / heads));
  // At least one task per thread (a decode row's tasks are all the same size,
  // so one each balances): each task reads its kv head's K/V from memory,
  // and at long context that read, not the arithmetic, is the step's cost.
  while (heads % 2 == 0 && (units / rows) * (group / heads) < P) heads /= 2;

  auto& tasks = s.attn_tasks_;
  tasks.clear();
  int64_t t_begin = 0;
  for (const BatchSeq& b : batch) {
    const int64_t t_end = t_begin + b.n_tokens;
    for (int64_t end = t_end; end > t_begin; end -= rows) {
      const int64_t t0 = std::max(t_begin, end - rows);
      const int64_t cost = (s.tok_pos_[end - 1] + 1) * (end - t0) * heads;
      for (int64_t h0 = 0; h0 < c.n_head; h0 += heads) tasks.push_back({t0, end - t0, h0, heads, cost});
    }
    t_begin = t_end;
  }
  std::sort(tasks.begin(), tasks.end(), [](const auto& x, const auto& y) { return x.cost > y.cost; });

  const int64_t n_tasks = static_cast<int64_t>(tasks.size());
  std::atomic<int64_t> next{0};
  pool.RunOnAll([&](int thread, int) {
    float* scratch = &s.scores_[static_cast<size_t>(thread) * s.scores_stride_];
    AttentionQuery queries[kMaxGroupQueries];
    for (;;) {
      const int64_t i = next.fetch_add(1, std::memory_order_relaxed);
      if (i >= n_tasks) break;
      const ForwardScratch::AttnTask& task = tasks[static_cast<size_t>(i)];
      AttentionArgs a;
      a.kv = &kv;
      a.block_table = batch[static_cast<size_t>(s.tok_seq_[task.t0])].block_table;
      a.layer = l;
      a.kv_head = task.h0 / group;
      a.head_dim = HD;
      a.scale = scale;
      a.round_q = !options_.precise_matmul;
      size_t n = 0;
      for (int64_t t = task.t0; t < task.t0 + task.n_rows; ++t)
        for (int64_t h = task.h0; h < task.h0 + task.n_heads; ++h)
          queries[n++] = {&s.q_[t * QD + h * HD], &s.attn_[t * QD + h * HD], s.tok_pos_[t] + 1};
      AttendGroup(a, {queries, n}, scratch);
    }
  });
}

}  // namespace pg
