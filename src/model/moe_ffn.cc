#include "model/moe_ffn.h"

#include <algorithm>
#include <atomic>
#include <cstring>

#include "backend/cpu/matmul_precise.h"
#include "backend/cpu/vec_ops.h"
#include "base/check.h"
#include "model/expert_router.h"

namespace pg {
namespace {

// Below this many elements SiluMul runs on the calling thread (a decode
// step's expert): a parallel region would cost more than the work.
constexpr int64_t kSerialSiluMul = 1 << 14;
// Up to this many (token, expert) rows, routing, gathering and summing run on
// the calling thread.
constexpr int64_t kSerialRows = 64;

}  // namespace

void SwiGluFfn(const WeightMatrix& gate, const WeightMatrix& up, const WeightMatrix& down, const float* x, int64_t T,
               float* g, float* u, float* y, ThreadPool& pool, MatMulScratch& mm, bool precise) {
  const int64_t F = gate.rows;
  const MatMulOut gate_up[2] = {{&gate, g, F}, {&up, u, F}};
  if (precise)
    MatMulPreciseMany(gate_up, 2, x, T, pool);
  else
    MatMulMany(gate_up, 2, x, T, pool, mm);
  if (T * F <= kSerialSiluMul) {
    for (int64_t t = 0; t < T; ++t) SiluMul(&g[t * F], &u[t * F], &g[t * F], F);
  } else {
    pool.ParallelFor(T, [&](int64_t t) { SiluMul(&g[t * F], &u[t * F], &g[t * F], F); });
  }
  if (precise)
    MatMulPrecise(down, g, F, T, y, down.rows, pool);
  else
    MatMul(down, g, T, y, pool, mm);
}

// The two ways of step 3 (MoeScratch's friends, declared there).

// One SwiGluFfn per active expert on its rows: whole experts per thread when
// there are at least two per thread, else one after another over the pool.
void RunExpertsOneByOne(const LayerWeights& L, int64_t D, int64_t F, ThreadPool& pool, MoeScratch& s, MatMulScratch& mm,
                        bool precise) {
  auto run_expert = [&](int64_t e, ThreadPool& p, MatMulScratch& m) {
    const int64_t r0 = s.offsets_[e], n = s.offsets_[e + 1] - r0;
    SwiGluFfn(L.gate_exps.Expert(e), L.up_exps.Expert(e), L.down_exps.Expert(e), &s.xg_[r0 * D], n, &s.gate_[r0 * F],
              &s.up_[r0 * F], &s.yg_[r0 * D], p, m, precise);
  };
  const int64_t n_active = static_cast<int64_t>(s.active_.size());
  if (pool.size() > 1 && n_active >= 2 * pool.size()) {
    // Whole experts per thread (MatMul's bits do not depend on its thread count).
    auto rows = [&](int32_t e) { return s.offsets_[e + 1] - s.offsets_[e]; };
    std::stable_sort(s.active_.begin(), s.active_.end(), [&](int32_t a, int32_t b) { return rows(a) > rows(b); });
    std::atomic<int64_t> next{0};
    pool.RunOnAll([&](int thread, int) {
      MoeScratch::Lane& lane = *s.lanes_[static_cast<size_t>(thread)];
      for (int64_t i; (i = next.fetch_add(1, std::memory_order_relaxed)) < n_active;)
        run_expert(s.active_[static_cast<size_t>(i)], lane.pool, lane.mm);
    });
  } else {
    for (int32_t e : s.active_) run_expert(e, pool, mm);
  }
}

// The grouped rows' activations for the gate and up products: each token's
// row of h prepared once (quantized as MatMul would) and copied to its
// grouped rows in xg_ (a prepared row is a function of its h row alone, so
// these are the bits of preparing the gathered rows). Null where gate and up
// want different preparations; then xg_ holds the gathered h rows.
const PreparedRows* GatherPrepared(const LayerWeights& L, const float* h, int64_t T, int64_t D, int64_t rows,
                                   ThreadPool& pool, MoeScratch& s, MatMulScratch& mm, PreparedRows* out) {
  auto gather = [&](const void* src, size_t bytes, auto* dst) {
    auto* d = reinterpret_cast<uint8_t*>(dst);
    auto copy = [&](int64_t row) {
      std::memcpy(d + row * bytes, static_cast<const uint8_t*>(src) + s.row_token_[row] * bytes, bytes);
    };
    if (rows <= kSerialRows) {
      for (int64_t row = 0; row < rows; ++row) copy(row);
    } else {
      pool.ParallelFor(rows, copy);
    }
  };
  if (!SamePreparedRows(L.gate_exps.first, L.up_exps.first)) {
    gather(h, sizeof(float) * D, s.xg_.data());
    return nullptr;
  }
  const PreparedRows p = PrepareRowsFor(L.gate_exps.first, h, D, T, pool, mm);
  PG_CHECK(p.stride <= sizeof(float) * D);  // a prepared row fits in a float row of xg_
  gather(p.data, p.stride, s.xg_.data());
  *out = {s.xg_.data(), p.stride};
  return out;
}

// Every active expert's gate and up as one grouped product (one parallel
// region, activations prepared once per token), SiLU * up over all rows,
// then every down as one grouped product: the same bits as RunExpertsOneByOne.
void RunExpertsGrouped(const LayerWeights& L, const float* h, int64_t T, int64_t rows, int64_t D, int64_t F,
                       ThreadPool& pool, MoeScratch& s, MatMulScratch& mm) {
  const size_t n = s.active_.size();
  for (size_t i = 0; i < n; ++i) {
    const int32_t e = s.active_[i];
    s.views_[3 * i] = L.gate_exps.Expert(e);
    s.views_[3 * i + 1] = L.up_exps.Expert(e);
    s.views_[3 * i + 2] = L.down_exps.Expert(e);
    const int64_t t0 = s.offsets_[e], t1 = s.offsets_[e + 1];
    s.groups_[i] = {&s.views_[3 * i], t0, t1, s.gate_.data(), F};
    s.groups_[n + i] = {&s.views_[3 * i + 1], t0, t1, s.up_.data(), F};
    s.groups_[2 * n + i] = {&s.views_[3 * i + 2], t0, t1, s.yg_.data(), D};
  }
  const bool one_kind =
      L.gate_exps.first.layout == L.up_exps.first.layout && L.gate_exps.first.type == L.up_exps.first.type;
  const auto N = static_cast<int64_t>(n);
  PreparedRows prepared;
  if (const PreparedRows* x = GatherPrepared(L, h, T, D, rows, pool, s, mm, &prepared)) {
    if (one_kind) {
      MatMulGroupedPrepared(s.groups_.data(), 2 * N, *x, rows, pool, mm);
    } else {
      MatMulGroupedPrepared(s.groups_.data(), N, *x, rows, pool, mm);
      MatMulGroupedPrepared(s.groups_.data() + n, N, *x, rows, pool, mm);
    }
  } else {
    MatMulGrouped(s.groups_.data(), N, s.xg_.data(), D, rows, pool, mm);
    MatMulGrouped(s.groups_.data() + n, N, s.xg_.data(), D, rows, pool, mm);
  }
  float* g = s.gate_.data();
  const float* u = s.up_.data();
  if (rows * F <= kSerialSiluMul) {  // per row as SwiGluFfn: a row's tail is its own
    for (int64_t t = 0; t < rows; ++t) SiluMul(&g[t * F], &u[t * F], &g[t * F], F);
  } else {
    pool.ParallelFor(rows, [&](int64_t t) { SiluMul(&g[t * F], &u[t * F], &g[t * F], F); });
  }
  MatMulGrouped(s.groups_.data() + 2 * n, N, g, F, rows, pool, mm);
}

void MoeScratch::Reserve(const ModelConfig& c, int64_t n_tokens, int n_threads) {
  if (!c.is_moe()) return;
  if (static_cast<int>(lanes_.size()) < n_threads || n_tokens > cap_tokens_) {
    while (static_cast<int>(lanes_.size()) < n_threads) lanes_.push_back(std::make_unique<Lane>());
    for (auto& lane : lanes_) lane->mm.Reserve(std::max(c.n_embd, c.moe.n_ff_exp), std::max(n_tokens, cap_tokens_));
  }
  if (n_tokens <= cap_tokens_) return;
  const auto T = static_cast<size_t>(n_tokens);
  const auto E = static_cast<size_t>(c.moe.n_expert), K = static_cast<size_t>(c.moe.n_expert_used);
  const auto D = static_cast<size_t>(c.n_embd), F = static_cast<size_t>(c.moe.n_ff_exp);
  const size_t FS = static_cast<size_t>(c.moe.n_shared) * F;
  logits_.resize(T * E);
  probs_.resize(T * E);
  experts_.resize(T * K);
  weights_.resize(T * K);
  offsets_.resize(E + 1);
  cursor_.resize(E);
  active_.reserve(E);
  views_.resize(3 * E);
  groups_.resize(3 * E);
  row_token_.resize(T * K);
  slot_row_.resize(T * K);
  xg_.resize(T * K * D);
  gate_.resize(std::max(T * K * F, T * FS));
  up_.resize(std::max(T * K * F, T * FS));
  yg_.resize(T * K * D);
  cap_tokens_ = n_tokens;
}

void MoeFfn(const ModelConfig& c, const LayerWeights& L, const float* h, int64_t T, float* out, ThreadPool& pool,
            MoeScratch& s, MatMulScratch& mm, bool precise, ExpertProducts how) {
  const int64_t D = c.n_embd, E = c.moe.n_expert, K = c.moe.n_expert_used, F = c.moe.n_ff_exp;
  s.Reserve(c, T, pool.size());
  mm.GroupTasks(static_cast<size_t>(3 * E + 1));  // grows once
  // Small batches (decode) do the bookkeeping on this thread: a parallel
  // region costs more than routing a few tokens.
  auto for_each = [&](int64_t n, auto&& fn) {
    if (T * K <= kSerialRows) {
      for (int64_t i = 0; i < n; ++i) fn(i);
    } else {
      pool.ParallelFor(n, fn);
    }
  };

  // 1. Route.
  MatMul(L.router, h, T, s.logits_.data(), pool, mm);
  const ExpertRouterParams rp = ExpertRouterParams::From(c.moe);
  for_each(T, [&](int64_t t) {
    RouteToken(rp, &s.logits_[t * E], L.router_bias, &s.probs_[t * E], &s.experts_[t * K], &s.weights_[t * K]);
  });

  // 2. Group the (token, slot) pairs by expert (counting sort, stable: an
  // expert's rows keep batch order).
  std::fill(s.offsets_.begin(), s.offsets_.end(), 0);
  for (int64_t i = 0; i < T * K; ++i) ++s.offsets_[s.experts_[i] + 1];
  for (int64_t e = 0; e < E; ++e) s.offsets_[e + 1] += s.offsets_[e];
  std::copy(s.offsets_.begin(), s.offsets_.end() - 1, s.cursor_.begin());
  for (int64_t i = 0; i < T * K; ++i) {
    const int64_t row = s.cursor_[s.experts_[i]]++;
    s.slot_row_[i] = row;
    s.row_token_[row] = static_cast<int32_t>(i / K);
  }

  // 3. The experts' SwiGLUs over their rows.
  s.active_.clear();
  for (int64_t e = 0; e < E; ++e)
    if (s.offsets_[e + 1] > s.offsets_[e]) s.active_.push_back(static_cast<int32_t>(e));
  s.experts_run_ += s.active_.size();
  if (precise || how == ExpertProducts::kPerExpert) {
    for_each(T * K, [&](int64_t row) {
      std::memcpy(&s.xg_[row * D], &h[static_cast<int64_t>(s.row_token_[row]) * D], sizeof(float) * D);
    });
    RunExpertsOneByOne(L, D, F, pool, s, mm, precise);
  } else {
    RunExpertsGrouped(L, h, T, T * K, D, F, pool, s, mm);
  }

  // 4. Weighted sum per token, in slot order.
  for_each(T, [&](int64_t t) {
    float* o = &out[t * D];
    const float* y0 = &s.yg_[s.slot_row_[t * K] * D];
    const float w0 = s.weights_[t * K];
    for (int64_t d = 0; d < D; ++d) o[d] = w0 * y0[d];
    for (int64_t j = 1; j < K; ++j) {
      const float* y = &s.yg_[s.slot_row_[t * K + j] * D];
      const float w = s.weights_[t * K + j];
      for (int64_t d = 0; d < D; ++d) o[d] += w * y[d];
    }
  });

  if (L.gate_shexp.rows > 0) {
    // The shared expert sees the same input; its output is added to the routed sum.
    SwiGluFfn(L.gate_shexp, L.up_shexp, L.down_shexp, h, T, s.gate_.data(), s.up_.data(), s.yg_.data(), pool, mm,
              precise);
    pool.ParallelFor(T, [&](int64_t t) { AddInPlace(&out[t * D], &s.yg_[t * D], D); });
  }
}

}  // namespace pg
