#include "model/mla_layer.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstring>

#include "backend/cpu/matmul_precise.h"
#include "backend/cpu/rope.h"
#include "backend/cpu/vec_ops.h"
#include "model/dsa_indexer.h"
#include "model/mla_attention.h"
#include "model/model.h"
#include "model/topk_select.h"

namespace pg {

void LayerNormNoEps(float* x, int64_t n) {
  double mean = 0, var = 0;
  for (int64_t i = 0; i < n; ++i) mean += x[i];
  mean /= static_cast<double>(n);
  for (int64_t i = 0; i < n; ++i) var += (x[i] - mean) * (x[i] - mean);
  const double inv = 1.0 / std::sqrt(var / static_cast<double>(n));
  for (int64_t i = 0; i < n; ++i) x[i] = static_cast<float>((x[i] - mean) * inv);
}

void MlaCosSin(const MlaConfig& m, int64_t pos, float* cos_out, float* sin_out) {
  for (size_t k = 0; k < m.inv_freq.size(); ++k) {
    const double ang = static_cast<double>(pos) * m.inv_freq[k];
    cos_out[k] = static_cast<float>(std::cos(ang) * m.rope_mag);
    sin_out[k] = static_cast<float>(std::sin(ang) * m.rope_mag);
  }
}

void MlaScratch::Reserve(const ModelConfig& c, int64_t n_tokens, int64_t max_ctx, int n_threads) {
  const MlaConfig& m = c.mla;
  const int64_t H = c.n_head;
  if (n_tokens > cap_tokens_) {
    const size_t T = static_cast<size_t>(n_tokens);
    qa_.resize(T * m.q_lora);
    q_.resize(T * H * m.k_head());
    kv_.resize(T * m.row());
    qabs_.resize(T * H * m.row());
    o_.resize(T * H * m.kv_lora);
    av_.resize(T * H * m.v_head);
    ik_.resize(T * m.index_dim);
    iw_.resize(T * m.index_heads);
    iq_.resize(T * m.index_heads * m.index_dim);
    sel_.resize(T * m.index_top_k);
    const size_t TH = static_cast<size_t>(std::min(n_tokens, kHeadGroupTokens) * H);
    xh_.resize(TH * std::max(m.nope, m.kv_lora));
    yh_.resize(TH * std::max(m.kv_lora, m.v_head));
    head_w_.resize(static_cast<size_t>(H));
    head_g_.resize(static_cast<size_t>(H));
    sel_n_.resize(T);
    cap_tokens_ = n_tokens;
  }
  if (max_ctx > cap_ctx_ || n_threads > cap_threads_) {
    cap_ctx_ = std::max(cap_ctx_, max_ctx);
    cap_threads_ = std::max(cap_threads_, n_threads);
    MlaAttentionArgs a;
    a.kv_lora = m.kv_lora;
    a.rope = m.rope;
    a.n_heads = H;
    thread_stride_ =
        std::max(MlaAttendScratchFloats(a, cap_ctx_), static_cast<size_t>(cap_ctx_ + kIndexerKeyGroup * m.index_dim));
    thread_f_.resize(thread_stride_ * cap_threads_);
    thread_i_.resize(static_cast<size_t>(cap_ctx_) * cap_threads_);
    thread_m_.resize(static_cast<size_t>(cap_ctx_) * cap_threads_);
  }
}

// One layer's run over the step (the stages of mla_layer.h).
class MlaLayerRun {
 public:
  MlaLayerRun(const ModelConfig& c, const LayerWeights& L, int64_t layer, const MlaStep& st, ThreadPool& pool,
              MlaScratch& s, MatMulScratch& mm)
      : c_(c), m_(c.mla), L_(L), layer_(layer), st_(st), pool_(pool), s_(s), mm_(mm) {
    slot_ = m_.IndexSlot(layer);
  }

  void Run(float* x, float* h) {
    const int64_t T = st_.n_tok, D = c_.n_embd;
    pool_.ParallelFor(T, [&](int64_t t) { RmsNorm(&x[t * D], L_.attn_norm, &h[t * D], D, c_.rms_eps); });
    Projections(h);
    pool_.ParallelFor(T, [&](int64_t t) { FinishRow(t); });
    QueryProducts();
    if (slot_ >= 0) SelectKeys();
    Attend();
    OutputProducts(h);
    pool_.ParallelFor(T, [&](int64_t t) { AddInPlace(&x[t * D], &h[t * D], D); });
  }

 private:
  void Products(const MatMulOut* outs, int n, const float* x) {
    if (st_.precise)
      MatMulPreciseMany(outs, n, x, st_.n_tok, pool_);
    else
      MatMulMany(outs, n, x, st_.n_tok, pool_, mm_);
  }
  // y_h = W[h] x_h for every head h: x_h of token t at x + (t * H + h) * xs (w's cols of it), y_h at
  // y + (t * H + h) * ys. A short step gathers the heads' rows by head and runs one grouped product
  // (every head's tasks in one parallel region); a long one, one strided product per head: each
  // element is MatMul's bits for its row either way.
  void PerHead(const ExpertStack& w, const float* x, int64_t xs, float* y, int64_t ys) {
    const int64_t H = c_.n_head, T = st_.n_tok, K = w.first.cols, N = w.first.rows;
    if (st_.precise || T > kHeadGroupTokens) {
      for (int64_t hh = 0; hh < H; ++hh) {
        if (st_.precise)
          MatMulPrecise(w.Expert(hh), x + hh * xs, H * xs, T, y + hh * ys, H * ys, pool_);
        else
          MatMulStrided(w.Expert(hh), x + hh * xs, H * xs, T, y + hh * ys, H * ys, pool_, mm_);
      }
      return;
    }
    float* xg = s_.xh_.data();
    float* yg = s_.yh_.data();
    for (int64_t hh = 0; hh < H; ++hh) {
      for (int64_t t = 0; t < T; ++t)
        std::memcpy(xg + (hh * T + t) * K, x + (t * H + hh) * xs, static_cast<size_t>(K) * sizeof(float));
      s_.head_w_[hh] = w.Expert(hh);
      s_.head_g_[hh] = {&s_.head_w_[hh], hh * T, (hh + 1) * T, yg, N};
    }
    MatMulGrouped(s_.head_g_.data(), H, xg, K, H * T, pool_, mm_);
    for (int64_t hh = 0; hh < H; ++hh)
      for (int64_t t = 0; t < T; ++t)
        std::memcpy(y + (t * H + hh) * ys, yg + (hh * T + t) * N, static_cast<size_t>(N) * sizeof(float));
  }

  // Stage 1: everything computed from the normed input h.
  void Projections(const float* h) {
    MatMulOut outs[4];
    int n = 0;
    if (m_.q_lora > 0)
      outs[n++] = {&L_.wq_a, s_.qa_.data(), m_.q_lora};
    else
      outs[n++] = {&L_.wq, s_.q_.data(), c_.n_head * m_.k_head()};
    outs[n++] = {&L_.wkv_a, s_.kv_.data(), m_.row()};
    if (slot_ >= 0) {
      outs[n++] = {&L_.ix_k, s_.ik_.data(), m_.index_dim};
      outs[n++] = {&L_.ix_proj, s_.iw_.data(), m_.index_heads};
    }
    Products(outs, n, h);
  }

  uint16_t* Slot(int64_t t, bool index) const {
    const KvPages& kv = *st_.kv;
    const BatchSeq& b = st_.batch[static_cast<size_t>(st_.tok_seq[t])];
    const int64_t pos = st_.tok_pos[t], P = kv.page_tokens();
    const int32_t block = b.block_table[pos / P];
    return index ? kv.IndexRow(block, slot_, pos % P) : kv.Row(block, layer_, 0, pos % P);
  }
  void Store(const float* row, uint16_t* dst, int64_t n) const {
    if (st_.kv->dtype() == KvDtype::kF32)
      std::memcpy(dst, row, static_cast<size_t>(n) * sizeof(float));
    else if (st_.kv->dtype() == KvDtype::kF16)
      StoreRowF16(row, dst, n);
    else
      StoreRowBF16(row, dst, n);
  }

  // Stage 2: q_a's norm, the latent row and the indexer key of token t.
  void FinishRow(int64_t t) {
    const float* cs = st_.cos + t * (m_.rope / 2);
    const float* sn = st_.sin + t * (m_.rope / 2);
    if (m_.q_lora > 0) {
      float* qa = &s_.qa_[t * m_.q_lora];
      RmsNorm(qa, L_.q_a_norm, qa, m_.q_lora, c_.rms_eps);
    }
    float* kv = &s_.kv_[t * m_.row()];
    RmsNorm(kv, L_.kv_a_norm, kv, m_.kv_lora, c_.rms_eps);
    RopeNorm(kv + m_.kv_lora, 1, m_.rope, m_.rope, cs, sn);
    Store(kv, Slot(t, false), m_.row());
    if (slot_ < 0) return;
    float* ik = &s_.ik_[t * m_.index_dim];
    LayerNormNoEps(ik, m_.index_dim);
    for (int64_t d = 0; d < m_.index_dim; ++d) ik[d] = ik[d] * L_.ix_k_norm[d] + L_.ix_k_norm_b[d];
    RopeNorm(ik, 1, m_.index_dim, m_.rope, cs, sn);
    Store(ik, Slot(t, true), m_.index_dim);
    const float w_scale = 1.0f / std::sqrt(static_cast<float>(m_.index_dim * m_.index_heads));
    for (int64_t i = 0; i < m_.index_heads; ++i) s_.iw_[t * m_.index_heads + i] *= w_scale;
  }

  // Stage 3: q (and the indexer queries) from q_a, RoPE, the absorbed queries.
  void QueryProducts() {
    const int64_t H = c_.n_head, KH = m_.k_head(), R = m_.row();
    if (m_.q_lora > 0) {
      MatMulOut outs[2] = {{&L_.wq_b, s_.q_.data(), H * KH},
                           {&L_.ix_q_b, s_.iq_.data(), m_.index_heads * m_.index_dim}};
      Products(outs, slot_ >= 0 ? 2 : 1, s_.qa_.data());
    }
    pool_.ParallelFor(st_.n_tok, [&](int64_t t) {
      const float* cs = st_.cos + t * (m_.rope / 2);
      const float* sn = st_.sin + t * (m_.rope / 2);
      float* q = &s_.q_[t * H * KH];
      RopeNorm(q + m_.nope, H, KH, m_.rope, cs, sn);
      for (int64_t hh = 0; hh < H; ++hh)
        std::copy(q + hh * KH + m_.nope, q + (hh + 1) * KH, &s_.qabs_[(t * H + hh) * R + m_.kv_lora]);
      if (slot_ >= 0)
        RopeNorm(&s_.iq_[t * m_.index_heads * m_.index_dim], m_.index_heads, m_.index_dim, m_.rope, cs, sn);
    });
    PerHead(L_.wk_b, s_.q_.data(), KH, s_.qabs_.data(), R);
  }

  // fn(thread, n) on every thread of the pool, or on this one alone for a one-token step (a
  // parallel region would only wake a thread with nothing to claim).
  template <typename Fn>
  void EachThread(Fn&& fn) {
    if (st_.n_tok == 1)
      fn(0, 1);
    else
      pool_.RunOnAll(fn);
  }

  // Stage 4: the indexer's top-k of each token.
  void SelectKeys() {
    const int64_t K = m_.index_top_k;
    if (st_.n_tok == 1 && pool_.size() > 1 && st_.tok_pos[0] + 1 > K) return SelectKeysOneToken();
    std::atomic<int64_t> next{0};
    EachThread([&](int thread, int) {
      float* scores = &s_.thread_f_[thread * s_.thread_stride_];
      int32_t* idx = &s_.thread_i_[static_cast<size_t>(thread) * s_.cap_ctx_];
      for (int64_t t; (t = next.fetch_add(1)) < st_.n_tok;) {
        const int64_t n = st_.tok_pos[t] + 1;
        int32_t* sel = &s_.sel_[t * K];
        if (n <= K) {
          s_.sel_n_[t] = TopKSelect(nullptr, n, K, sel, idx);  // every causal key
          continue;
        }
        IndexerArgs a{st_.kv, BlockTable(t), slot_, m_.index_heads, m_.index_dim};
        IndexerScores(a, &s_.iq_[t * m_.index_heads * m_.index_dim], &s_.iw_[t * m_.index_heads], n, scores,
                      scores + n);
        s_.sel_n_[t] = TopKSelect(scores, n, K, sel, idx);
      }
    });
  }

  // A one-token step past top-k: the threads split the query's keys (each key's score is its
  // own: the same bits), then the calling thread selects.
  void SelectKeysOneToken() {
    const int64_t K = m_.index_top_k, n = st_.tok_pos[0] + 1;
    float* scores = &s_.thread_f_[0];
    const IndexerArgs a{st_.kv, BlockTable(0), slot_, m_.index_heads, m_.index_dim};
    pool_.RunOnAll([&](int thread, int n_threads) {
      float* key = &s_.thread_f_[thread * s_.thread_stride_ + s_.cap_ctx_];
      IndexerScoresRange(a, &s_.iq_[0], &s_.iw_[0], n * thread / n_threads, n * (thread + 1) / n_threads, scores, key);
    });
    s_.sel_n_[0] = TopKSelect(scores, n, K, &s_.sel_[0], &s_.thread_i_[0]);
  }

  const int32_t* BlockTable(int64_t t) const { return st_.batch[static_cast<size_t>(st_.tok_seq[t])].block_table; }

  // Stage 5: attention of every token over its keys; a one-token step splits its heads across the
  // threads instead (each head's result is its own: the same bits).
  void Attend() {
    const int64_t H = c_.n_head;
    if (st_.n_tok == 1 && pool_.size() > 1) {
      pool_.RunOnAll([&](int thread, int n) {
        const int64_t h0 = H * thread / n, h1 = H * (thread + 1) / n;
        if (h1 > h0) AttendToken(0, h0, h1, thread);
      });
      return;
    }
    std::atomic<int64_t> next{0};
    pool_.RunOnAll([&](int thread, int) {
      for (int64_t t; (t = next.fetch_add(1)) < st_.n_tok;) AttendToken(t, 0, H, thread);
    });
  }

  // Heads [h0, h1) of token t, with thread `thread`'s scratch.
  void AttendToken(int64_t t, int64_t h0, int64_t h1, int thread) {
    const int64_t H = c_.n_head, R = m_.row(), K = m_.index_top_k, C = m_.kv_lora;
    float* scratch = &s_.thread_f_[thread * s_.thread_stride_];
    uint8_t* mask = &s_.thread_m_[static_cast<size_t>(thread) * s_.cap_ctx_];
    MlaAttentionArgs a{st_.kv, BlockTable(t), layer_, m_.kv_lora, m_.rope, h1 - h0, static_cast<float>(m_.kq_scale)};
    const int64_t n = st_.tok_pos[t] + 1;
    const int32_t* keys = nullptr;
    const uint8_t* allowed = nullptr;
    int64_t n_keys = n;
    if (m_.sparse() && n > K) {
      const int32_t* sel = &s_.sel_[t * K];
      if (st_.sparse == SparseAttention::kSparse) {
        keys = sel;
        n_keys = s_.sel_n_[t];
      } else {
        std::fill(mask, mask + n, uint8_t{0});
        for (int64_t j = 0; j < s_.sel_n_[t]; ++j) mask[sel[j]] = 1;
        allowed = mask;
      }
    }
    MlaAttend(a, &s_.qabs_[(t * H + h0) * R], keys, n_keys, allowed, &s_.o_[(t * H + h0) * C], scratch);
  }

  // Stage 6: W_vb per head, then attn_output into h.
  void OutputProducts(float* h) {
    PerHead(L_.wv_b, s_.o_.data(), m_.kv_lora, s_.av_.data(), m_.v_head);
    const MatMulOut wo{&L_.wo, h, c_.n_embd};
    Products(&wo, 1, s_.av_.data());
  }

  const ModelConfig& c_;
  const MlaConfig& m_;
  const LayerWeights& L_;
  int64_t layer_;
  int64_t slot_;  // indexer slot of this layer, -1 when it reuses the last selection or has none
  const MlaStep& st_;
  ThreadPool& pool_;
  MlaScratch& s_;
  MatMulScratch& mm_;
};

void MlaAttentionLayer(const ModelConfig& c, const LayerWeights& L, int64_t layer, const MlaStep& step, float* x,
                       float* h, ThreadPool& pool, MlaScratch& s, MatMulScratch& mm) {
  MlaLayerRun(c, L, layer, step, pool, s, mm).Run(x, h);
}

}  // namespace pg
