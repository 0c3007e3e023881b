#include "backend/cpu/matmul_precise.h"

#include <algorithm>

#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/dequant_chunk.h"
#include "backend/cpu/quant.h"
#include "base/check.h"

namespace pg {
namespace {

constexpr int64_t kTokTile = 32;  // tokens per tile: one dequantized chunk serves all of them
constexpr int kMaxOuts = 8;

void CheckMatrix(const WeightMatrix& w, int64_t ldx, int64_t ldy) {
  PG_CHECK_MSG(w.layout == WeightLayout::kRowMajor, "MatMulPrecise: only row-major weights");
  PG_CHECK_MSG(w.Validate().ok(), "MatMulPrecise: invalid weight matrix");
  PG_CHECK(ldx >= w.cols && ldy >= w.rows);
}

}  // namespace

void MatMulPreciseTile(const WeightMatrix& w, const float* x, int64_t ldx, int64_t t0, int64_t t1, int64_t r0,
                       int64_t r1, float* y, int64_t ldy) {
  alignas(64) float chunk[kPreciseChunk];
  const auto dot = ActiveKernels().dot_f32;  // DotF32 without the per-call dispatch
  float acc[kTokTile];
  const size_t block_bytes = InfoOf(w.type).block_bytes;
  const int64_t block_elems = InfoOf(w.type).block_elems;
  for (int64_t tb = t0; tb < t1; tb += kTokTile) {
    const int64_t te = std::min(t1, tb + kTokTile);
    for (int64_t r = r0; r < r1; ++r) {
      const auto* row = static_cast<const uint8_t*>(w.data) + static_cast<size_t>(r) * w.row_bytes;
      std::fill(acc, acc + (te - tb), 0.0f);
      for (int64_t c = 0; c < w.cols; c += kPreciseChunk) {
        const int64_t n = std::min(kPreciseChunk, w.cols - c);
        const float* wc;
        if (w.type == GgmlType::F32) {
          wc = reinterpret_cast<const float*>(row) + c;
        } else {
          // Validate() guarantees cols (hence c and n) are whole blocks.
          DequantizeChunk(w.type, row + static_cast<size_t>(c / block_elems) * block_bytes, chunk, n);
          wc = chunk;
        }
        for (int64_t t = tb; t < te; ++t) acc[t - tb] += dot(wc, x + t * ldx + c, n);
      }
      for (int64_t t = tb; t < te; ++t) y[t * ldy + r] = acc[t - tb];
    }
  }
}

void MatMulPrecise(const WeightMatrix& w, const float* x, int64_t ldx, int64_t n_tokens, float* y, int64_t ldy,
                   ThreadPool& pool) {
  CheckMatrix(w, ldx, ldy);
  if (n_tokens <= 0) return;
  const int64_t row_block = std::max<int64_t>(8, w.rows / (4 * pool.size()) / 8 * 8);
  const int64_t n_row_blocks = (w.rows + row_block - 1) / row_block;
  const int64_t n_tok_blocks = (n_tokens + kTokTile - 1) / kTokTile;
  pool.ParallelFor(n_row_blocks * n_tok_blocks, [&](int64_t task) {
    const int64_t rb = task % n_row_blocks, tb = task / n_row_blocks;
    const int64_t r0 = rb * row_block, t0 = tb * kTokTile;
    MatMulPreciseTile(w, x, ldx, t0, std::min(n_tokens, t0 + kTokTile), r0, std::min(w.rows, r0 + row_block), y, ldy);
  });
}

void MatMulPreciseMany(const MatMulOut* outs, int n_outs, const float* x, int64_t n_tokens, ThreadPool& pool) {
  PG_CHECK(n_outs > 0 && n_outs <= kMaxOuts);
  const int64_t cols = outs[0].w->cols;
  int64_t total_rows = 0;
  for (int i = 0; i < n_outs; ++i) {
    CheckMatrix(*outs[i].w, cols, outs[i].ldy);
    PG_CHECK_MSG(outs[i].w->cols == cols, "MatMulPreciseMany: matrices differ in cols");
    total_rows += outs[i].w->rows;
  }
  if (n_tokens <= 0) return;
  // Row blocks of a multiple of 8 rows, ~4 tasks per thread over all outputs.
  const int64_t row_block = std::max<int64_t>(8, total_rows / (4 * pool.size()) / 8 * 8);
  const int64_t n_tok_blocks = (n_tokens + kTokTile - 1) / kTokTile;
  int64_t first_task[kMaxOuts + 1] = {0};
  for (int i = 0; i < n_outs; ++i)
    first_task[i + 1] = first_task[i] + (outs[i].w->rows + row_block - 1) / row_block * n_tok_blocks;
  pool.ParallelFor(first_task[n_outs], [&](int64_t task) {
    int i = 0;
    while (task >= first_task[i + 1]) ++i;
    const WeightMatrix& w = *outs[i].w;
    const int64_t n_row_blocks = (w.rows + row_block - 1) / row_block;
    const int64_t local = task - first_task[i];
    const int64_t r0 = (local % n_row_blocks) * row_block, t0 = (local / n_row_blocks) * kTokTile;
    MatMulPreciseTile(w, x, cols, t0, std::min(n_tokens, t0 + kTokTile), r0, std::min(w.rows, r0 + row_block),
                      outs[i].y, outs[i].ldy);
  });
}

}  // namespace pg
