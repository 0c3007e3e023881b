#include "backend/cpu/matmul.h"

#include <algorithm>
#include <cstdlib>
#include <string>

#include "backend/cpu/cpu_kernels.h"
#include "base/check.h"

namespace pg {
namespace {

// Work partition. A task is a (row block, token block) tile. Blocks are
// sized so that one block of weights and one of activations stay in L2
// (~128 KiB each), rows come in multiples of 16 for the register tiles (two
// 8-row groups: the AVX-512 tiles of the 8-row layouts take them in pairs),
// and there are enough tasks for the atomic-counter scheduler to balance.
constexpr size_t kL2Budget = 128 * 1024;
constexpr int64_t kRowQuantum = 16;  // a task's rows, but for a matrix's last task

// Up to this many activation elements are prepared on the calling thread.
constexpr int64_t kSerialPrepare = 1 << 13;

int64_t RoundUp(int64_t v, int64_t m) { return (v + m - 1) / m * m; }

// Converts x (n_tokens rows of `cols`, ldx floats apart) into `fmt` in
// scratch; returns the prepared rows and their stride in bytes (x itself for
// kF32). Rows are independent: the bits do not depend on how many there are.
const void* PrepareActivations(const CpuKernels& k, ActFormat fmt, const float* x, int64_t ldx, int64_t cols,
                               int64_t n_tokens, ThreadPool& pool, MatMulScratch& scratch, size_t* stride) {
  *stride = static_cast<size_t>(ldx) * sizeof(float);
  if (fmt == ActFormat::kF32) return x;
  const size_t xs = ActRowBytes(fmt, cols);
  *stride = xs;
  auto* buf = static_cast<uint8_t*>(scratch.Get(xs * static_cast<size_t>(n_tokens)));
  auto quantize_row = [&](int64_t t) {
    const float* xt = x + t * ldx;
    uint8_t* out = buf + t * xs;
    switch (fmt) {
      case ActFormat::kQ8_0: k.quantize_q8_0(xt, reinterpret_cast<BlockQ8_0*>(out), cols); break;
      case ActFormat::kQ8_K: k.quantize_q8_k(xt, reinterpret_cast<BlockQ8_K*>(out), cols); break;
      case ActFormat::kF32AsF16:
      case ActFormat::kF32AsBF16: {
        uint16_t half[256];
        auto* of = reinterpret_cast<float*>(out);
        for (int64_t c = 0; c < cols; c += 256) {
          const int64_t m = std::min<int64_t>(256, cols - c);
          if (fmt == ActFormat::kF32AsF16) {
            k.f32_to_f16(xt + c, half, m);
            k.f16_to_f32(half, of + c, m);
          } else {
            k.f32_to_bf16(xt + c, half, m);
            k.bf16_to_f32(half, of + c, m);
          }
        }
        break;
      }
      case ActFormat::kF32: break;
    }
  };
  // A parallel region costs more than quantizing a few short rows.
  if (n_tokens == 1 || pool.size() == 1 || n_tokens * cols <= kSerialPrepare) {
    for (int64_t t = 0; t < n_tokens; ++t) quantize_row(t);
  } else {
    pool.ParallelFor(n_tokens, quantize_row);
  }
  return buf;
}

}  // namespace

Status WeightMatrix::Validate() const {
  if (WeightKindOf(*this) == WeightKind::kCount) {
    const GgmlTypeInfo* info = GgmlTypeInfoFor(static_cast<uint32_t>(type));
    return Unimplemented(std::string("matmul weight type ") + (info ? info->name : "?") +
                         (layout == WeightLayout::kRowMajor ? "" : " in this layout") + " is not supported");
  }
  if (data == nullptr || rows <= 0 || cols <= 0) return InvalidArgument("empty weight matrix");
  const GgmlTypeInfo& info = InfoOf(type);
  if (cols % info.block_elems != 0) {
    return InvalidArgument(std::string("weight row of ") + std::to_string(cols) +
                           " elements is not a multiple of the " + info.name + " block size");
  }
  if (row_bytes < RowBytes(type, cols)) return InvalidArgument("weight row_bytes too small");
  return Status::Ok();
}

WeightMatrix MakeWeightMatrix(GgmlType type, const void* data, int64_t rows, int64_t cols) {
  WeightMatrix w;
  w.type = type;
  w.data = data;
  w.rows = rows;
  w.cols = cols;
  const GgmlTypeInfo* info = GgmlTypeInfoFor(static_cast<uint32_t>(type));
  w.row_bytes = info ? RowBytes(type, cols) : 0;
  return w;
}

void MatMulScratch::FreeDeleter::operator()(void* p) const { std::free(p); }

void MatMulScratch::Reserve(int64_t cols, int64_t n_tokens) {
  // f32 copies (rounded to f16/bf16) are the largest prepared format.
  const size_t per_row =
      std::max({ActRowBytes(ActFormat::kF32AsF16, cols), ActRowBytes(ActFormat::kQ8_0, RoundUp(cols, kQK)),
                ActRowBytes(ActFormat::kQ8_K, RoundUp(cols, kQKK))});
  Get(per_row * static_cast<size_t>(n_tokens));
}

void* MatMulScratch::Get(size_t bytes) {
  if (bytes > capacity_) {
    const size_t cap = (bytes + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, cap);
    PG_CHECK_MSG(p != nullptr, "out of memory for matmul scratch");
    buf_.reset(p);
    capacity_ = cap;
  }
  return buf_.get();
}

void MatMul(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y, ThreadPool& pool,
            MatMulScratch& scratch) {
  MatMulWith(ActiveKernels(), w, x, w.cols, n_tokens, y, w.rows, pool, scratch);
}

void MatMulStrided(const WeightMatrix& w, const float* x, int64_t ldx, int64_t n_tokens, float* y, int64_t ldy,
                   ThreadPool& pool, MatMulScratch& scratch) {
  MatMulWith(ActiveKernels(), w, x, ldx, n_tokens, y, ldy, pool, scratch);
}

void MatMulWith(const CpuKernels& k, const WeightMatrix& w, const float* x, int64_t ldx, int64_t n_tokens, float* y,
                int64_t ldy, ThreadPool& pool, MatMulScratch& scratch) {
  const MatMulOut out{&w, y, ldy};
  MatMulManyWith(k, &out, 1, x, ldx, n_tokens, pool, scratch);
}

void MatMulMany(const MatMulOut* outs, int n_outs, const float* x, int64_t n_tokens, ThreadPool& pool,
                MatMulScratch& scratch) {
  PG_CHECK(n_outs > 0);
  MatMulManyWith(ActiveKernels(), outs, n_outs, x, outs[0].w->cols, n_tokens, pool, scratch);
}

void MatMulManyWith(const CpuKernels& k, const MatMulOut* outs, int n_outs, const float* x, int64_t ldx,
                    int64_t n_tokens, ThreadPool& pool, MatMulScratch& scratch) {
  if (n_tokens <= 0 || n_outs <= 0) return;
  constexpr int kMaxOuts = 8;
  PG_CHECK(n_outs <= kMaxOuts);
  const WeightMatrix& w0 = *outs[0].w;
  const ActFormat fmt = ActFormatOf(WeightKindOf(w0));
  for (int i = 0; i < n_outs; ++i) {
    const WeightMatrix& w = *outs[i].w;
    const WeightKind kind = WeightKindOf(w);
    PG_CHECK_MSG(kind != WeightKind::kCount, "unsupported matmul weight type");
    PG_CHECK(w.data != nullptr && w.rows > 0 && w.cols > 0);
    PG_CHECK(w.cols % InfoOf(w.type).block_elems == 0);
    PG_CHECK(w.row_bytes >= RowBytes(w.type, w.cols));
    PG_CHECK(ldx >= w.cols && outs[i].ldy >= w.rows);
    PG_CHECK_MSG(w.cols == w0.cols, "MatMulMany: matrices differ in cols");
    if (ActFormatOf(kind) != fmt) {
      // Different activation formats cannot share one preparation: one at a time.
      for (int j = 0; j < n_outs; ++j) MatMulManyWith(k, &outs[j], 1, x, ldx, n_tokens, pool, scratch);
      return;
    }
  }
  const int64_t cols = w0.cols;

  // 1. Prepare activations.
  size_t xs = 0;
  const void* xa = PrepareActivations(k, fmt, x, ldx, cols, n_tokens, pool, scratch, &xs);

  // 2. Partition every output into (row block, token block) tasks; all
  //    outputs' tasks run in one parallel region.
  const int64_t threads = pool.size();
  int64_t tok_block = n_tokens;
  if (n_tokens > 16) {
    tok_block = std::clamp<int64_t>(static_cast<int64_t>(kL2Budget / xs), 8, 128);
    tok_block = std::min(RoundUp(tok_block, 4), n_tokens);
  }
  const int64_t n_tok_blocks = (n_tokens + tok_block - 1) / tok_block;
  int64_t total_rows = 0;
  for (int i = 0; i < n_outs; ++i) total_rows += outs[i].w->rows;

  struct Part {
    int64_t row_block, n_row_blocks, first_task;
  };
  Part parts[kMaxOuts];
  int64_t n_tasks = 0;
  for (int i = 0; i < n_outs; ++i) {
    const WeightMatrix& w = *outs[i].w;
    int64_t row_block = std::clamp<int64_t>(static_cast<int64_t>(kL2Budget / w.row_bytes), 8, 512);
    // Enough tasks to balance: at least ~4 per thread over all outputs,
    // each output contributing in proportion to its rows.
    const int64_t want_tasks = std::max<int64_t>(1, threads * 4 * w.rows / total_rows);
    if (n_tok_blocks * ((w.rows + row_block - 1) / row_block) < want_tasks) {
      const int64_t rb = (w.rows * n_tok_blocks + want_tasks - 1) / want_tasks;
      row_block = std::min(row_block, rb);
    }
    row_block = RoundUp(row_block, kRowQuantum);
    parts[i].row_block = row_block;
    parts[i].n_row_blocks = (w.rows + row_block - 1) / row_block;
    parts[i].first_task = n_tasks;
    n_tasks += parts[i].n_row_blocks * n_tok_blocks;
  }

  auto run = [&](int64_t task) {
    int i = n_outs - 1;
    while (task < parts[i].first_task) --i;
    const WeightMatrix& w = *outs[i].w;
    const Part& p = parts[i];
    const int64_t local = task - p.first_task;
    const int64_t rb = local % p.n_row_blocks, tb = local / p.n_row_blocks;
    const int64_t r0 = rb * p.row_block, r1 = std::min(w.rows, r0 + p.row_block);
    const int64_t t0 = tb * tok_block, t1 = std::min(n_tokens, t0 + tok_block);
    k.gemm[static_cast<int>(WeightKindOf(w))](w, xa, xs, t0, t1, r0, r1, outs[i].y, outs[i].ldy);
  };
  pool.ParallelFor(n_tasks, run);
}

void MatMulGrouped(const MatMulGroup* groups, int64_t n_groups, const float* x, int64_t ldx, int64_t n_rows,
                   ThreadPool& pool, MatMulScratch& scratch) {
  MatMulGroupedWith(ActiveKernels(), groups, n_groups, x, ldx, n_rows, pool, scratch);
}

namespace {

// Checks that every group's matrix has group 0's kind and shape.
void CheckGroups(const MatMulGroup* groups, int64_t n_groups, int64_t n_rows) {
  const WeightMatrix& w0 = *groups[0].w;
  const WeightKind kind0 = WeightKindOf(w0);
  PG_CHECK_MSG(kind0 != WeightKind::kCount, "unsupported matmul weight type");
  PG_CHECK(w0.data != nullptr && w0.rows > 0 && w0.cols > 0);
  PG_CHECK(w0.cols % InfoOf(w0.type).block_elems == 0 && w0.row_bytes >= RowBytes(w0.type, w0.cols));
  for (int64_t g = 0; g < n_groups; ++g) {
    const MatMulGroup& G = groups[g];
    PG_CHECK_MSG(WeightKindOf(*G.w) == kind0 && G.w->rows == w0.rows && G.w->cols == w0.cols &&
                     G.w->row_bytes == w0.row_bytes && G.w->data != nullptr,
                 "MatMulGrouped: matrices differ in kind or shape");
    PG_CHECK(0 <= G.t0 && G.t0 <= G.t1 && G.t1 <= n_rows && G.ldy >= w0.rows);
  }
}

// Tasks: (group, token block, row block), every group with the same row
// blocks (its matrices share a shape), at least ~4 per thread; one region.
void RunGroups(const CpuKernels& k, const MatMulGroup* groups, int64_t n_groups, const void* xa, size_t xs,
               ThreadPool& pool, MatMulScratch& scratch) {
  const WeightMatrix& w0 = *groups[0].w;
  const int64_t rows = w0.rows;
  const int64_t tok_cap = std::clamp<int64_t>(static_cast<int64_t>(kL2Budget / xs), 8, 128);
  int64_t* first = scratch.GroupTasks(n_groups + 1);  // first[g]: g's first task / n_row_blocks
  first[0] = 0;
  for (int64_t g = 0; g < n_groups; ++g) {
    const int64_t n = groups[g].t1 - groups[g].t0;
    first[g + 1] = first[g] + (n + tok_cap - 1) / tok_cap;
  }
  const int64_t n_tok_blocks = first[n_groups];
  if (n_tok_blocks == 0) return;
  int64_t row_block = std::clamp<int64_t>(static_cast<int64_t>(kL2Budget / w0.row_bytes), 8, 512);
  const int64_t want_tasks = pool.size() * 4;
  if (n_tok_blocks * ((rows + row_block - 1) / row_block) < want_tasks)
    row_block = std::min(row_block, (rows * n_tok_blocks + want_tasks - 1) / want_tasks);
  row_block = RoundUp(row_block, kRowQuantum);
  const int64_t n_row_blocks = (rows + row_block - 1) / row_block;

  const GemmTileFn gemm = k.gemm[static_cast<int>(WeightKindOf(w0))];
  pool.ParallelFor(n_tok_blocks * n_row_blocks, [&](int64_t task) {
    const int64_t tb = task / n_row_blocks, rb = task % n_row_blocks;
    const int64_t g = std::upper_bound(first, first + n_groups + 1, tb) - first - 1;
    const MatMulGroup& G = groups[g];
    const int64_t t0 = G.t0 + (tb - first[g]) * tok_cap, t1 = std::min(G.t1, t0 + tok_cap);
    const int64_t r0 = rb * row_block, r1 = std::min(rows, r0 + row_block);
    gemm(*G.w, xa, xs, t0, t1, r0, r1, G.y, G.ldy);
  });
}

}  // namespace

void MatMulGroupedWith(const CpuKernels& k, const MatMulGroup* groups, int64_t n_groups, const float* x, int64_t ldx,
                       int64_t n_rows, ThreadPool& pool, MatMulScratch& scratch) {
  if (n_groups <= 0 || n_rows <= 0) return;
  CheckGroups(groups, n_groups, n_rows);
  const WeightMatrix& w0 = *groups[0].w;
  PG_CHECK(ldx >= w0.cols);
  // All rows' activations, prepared once.
  size_t xs = 0;
  const void* xa = PrepareActivations(k, ActFormatOf(WeightKindOf(w0)), x, ldx, w0.cols, n_rows, pool, scratch, &xs);
  RunGroups(k, groups, n_groups, xa, xs, pool, scratch);
}

PreparedRows PrepareRowsFor(const WeightMatrix& w, const float* x, int64_t ldx, int64_t n_rows, ThreadPool& pool,
                            MatMulScratch& scratch) {
  const WeightKind kind = WeightKindOf(w);
  PG_CHECK_MSG(kind != WeightKind::kCount, "unsupported matmul weight type");
  PG_CHECK(ldx >= w.cols && w.cols % InfoOf(w.type).block_elems == 0);
  PreparedRows p;
  p.data = PrepareActivations(ActiveKernels(), ActFormatOf(kind), x, ldx, w.cols, n_rows, pool, scratch, &p.stride);
  return p;
}

bool SamePreparedRows(const WeightMatrix& a, const WeightMatrix& b) {
  return a.cols == b.cols && ActFormatOf(WeightKindOf(a)) == ActFormatOf(WeightKindOf(b));
}

void MatMulGroupedPrepared(const MatMulGroup* groups, int64_t n_groups, PreparedRows x, int64_t n_rows,
                           ThreadPool& pool, MatMulScratch& scratch) {
  if (n_groups <= 0 || n_rows <= 0) return;
  CheckGroups(groups, n_groups, n_rows);
  const WeightMatrix& w0 = *groups[0].w;
  const ActFormat fmt = ActFormatOf(WeightKindOf(w0));
  PG_CHECK(x.data != nullptr && x.stride >= (fmt == ActFormat::kF32 ? sizeof(float) * static_cast<size_t>(w0.cols)
                                                                    : ActRowBytes(fmt, w0.cols)));
  RunGroups(ActiveKernels(), groups, n_groups, x.data, x.stride, pool, scratch);
}

}  // namespace pg
