// MatMul: y = x * W^T for a weight matrix in any supported GGUF type, on the
// CPU, parallel over a ThreadPool. This is the GEMV (decode, n_tokens == 1)
// and GEMM (prefill, batched decode) of the forward pass.
//
// Like llama.cpp, activations are first quantized to the weight type's
// "dot partner" (Q8_0 for Q8_0/Q4_0 weights, Q8_K for K-quants, f32 values
// rounded to f16/bf16 for F16/BF16 weights, plain f32 for F32) and the inner
// products are integer dot products with one float scale per block (f32 FMAs
// for the float types).
//
// Thread-safety: MatMul may run concurrently on different scratch objects
// (and different pools); a MatMulScratch belongs to one caller at a time.
// MatMul uses `pool` itself, so it must not be called from inside a
// ParallelFor task of the same pool.
//
// Usage: reserve the scratch once for the largest (cols, n_tokens) the caller
// will use, e.g. scratch.Reserve(max(n_embd, n_ff), max_batch_tokens); later
// calls then never allocate.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "base/status.h"
#include "base/thread_pool.h"
#include "gguf/ggml_type.h"

namespace pg {

struct CpuKernels;

// How a weight matrix's blocks are arranged in memory.
enum class WeightLayout : uint8_t {
  kRowMajor,  // as in a GGUF file: row r at data + r * row_bytes
  kQ8_0x8,    // Q8_0 repacked in groups of 8 rows (backend/cpu/repack.h)
  kHalf4,     // F16 / BF16 repacked in groups of 4 rows (backend/cpu/repack.h)
  kQ4_Kx8,    // Q4_K repacked in groups of 8 rows (backend/cpu/repack.h)
  kQ6_Kx8,    // Q6_K repacked in groups of 8 rows (backend/cpu/repack.h)
  kQ5_0x8,    // Q5_0 repacked in groups of 8 rows (backend/cpu/repack.h)
  kQ5_Kx8,    // Q5_K repacked in groups of 8 rows (backend/cpu/repack.h)
  kFP8x4,     // FP8_E4M3 repacked in groups of 4 rows (backend/cpu/repack.h)
};

// A weight matrix: `rows` output features of `cols` input features. As stored
// in a GGUF file (kRowMajor) each row is contiguous, row r at
// data + r * row_bytes; a repacked matrix (repack.h) keeps the type, rows,
// cols and row_bytes of its source and only rearranges the blocks (except
// Q5_0 repacked as Q8_0x8, whose view says Q8_0 and a Q8_0 row's bytes).
struct WeightMatrix {
  GgmlType type = GgmlType::F32;
  const void* data = nullptr;
  int64_t rows = 0;      // out features
  int64_t cols = 0;      // in features, contiguous
  size_t row_bytes = 0;  // >= RowBytes(type, cols)
  WeightLayout layout = WeightLayout::kRowMajor;

  // Checks type support, block divisibility of cols and row_bytes.
  Status Validate() const;
};

// Convenience: a densely packed matrix (row_bytes = RowBytes(type, cols)).
WeightMatrix MakeWeightMatrix(GgmlType type, const void* data, int64_t rows, int64_t cols);

// Per-caller buffers for quantized activations. Grows on demand (the first
// call at a given size allocates); Reserve() sizes it up front so that the
// forward pass never allocates.
class MatMulScratch {
 public:
  MatMulScratch() = default;
  MatMulScratch(const MatMulScratch&) = delete;
  MatMulScratch& operator=(const MatMulScratch&) = delete;

  // Makes room for n_tokens activation rows of `cols` features, for any weight type.
  void Reserve(int64_t cols, int64_t n_tokens);
  // Returns at least `bytes` of 64-byte aligned memory (contents unspecified).
  void* Get(size_t bytes);
  size_t capacity() const { return capacity_; }
  // Room for n task offsets of MatMulGrouped (grown on demand; Reserve a
  // model's 2 * n_expert + 1 up front).
  int64_t* GroupTasks(size_t n) {
    if (group_tasks_.size() < n) group_tasks_.resize(n);
    return group_tasks_.data();
  }

 private:
  struct FreeDeleter {
    void operator()(void* p) const;
  };
  std::unique_ptr<void, FreeDeleter> buf_;
  size_t capacity_ = 0;
  std::vector<int64_t> group_tasks_;
};

// y[t * w.rows + r] = sum_c W[r, c] * x[t * w.cols + c], t in [0, n_tokens).
// x is [n_tokens, cols] f32 row-major, y is [n_tokens, rows] f32 row-major.
// W must pass Validate() (checked with PG_CHECK: the loader validates tensors).
void MatMul(const WeightMatrix& w, const float* x, int64_t n_tokens, float* y, ThreadPool& pool,
            MatMulScratch& scratch);

// Same with explicit strides (in floats) between tokens of x and of y, e.g.
// to write a slice of a wider output. ldx >= cols, ldy >= rows.
void MatMulStrided(const WeightMatrix& w, const float* x, int64_t ldx, int64_t n_tokens, float* y, int64_t ldy,
                   ThreadPool& pool, MatMulScratch& scratch);

// One output of MatMulMany: y[t * ldy + r] = (W x_t)[r].
struct MatMulOut {
  const WeightMatrix* w;
  float* y;
  int64_t ldy;  // >= w->rows
};

// Several weight matrices applied to the same x (Q/K/V, gate/up): the
// activations are prepared once and all products run in one parallel
// region (one barrier instead of n). All matrices must have the same cols;
// at most 8 outputs. Matrices whose activation formats differ (e.g. Q8_0 with
// Q4_K) are still handled, one after another.
void MatMulMany(const MatMulOut* outs, int n_outs, const float* x, int64_t n_tokens, ThreadPool& pool,
                MatMulScratch& scratch);

// One group of MatMulGrouped: y[t * ldy + r] = (W x_t)[r] for the rows t in
// [t0, t1) of x (a Mixture-of-Experts layer: one expert's matrix and the
// tokens routed to it, gathered into consecutive rows).
struct MatMulGroup {
  const WeightMatrix* w;
  int64_t t0, t1;
  float* y;
  int64_t ldy;  // >= w->rows
};

// Many matrices of one kind and shape (a layer's experts), each applied to
// its own range of x's n_rows rows (ldx floats apart): the activations are
// prepared once for all rows, and every group's (token block, row block)
// tasks run in one parallel region, so a decode step's experts keep every
// thread busy instead of running one small GEMV after another. Each output
// element is the bits MatMul gives for that matrix and row of x.
void MatMulGrouped(const MatMulGroup* groups, int64_t n_groups, const float* x, int64_t ldx, int64_t n_rows,
                   ThreadPool& pool, MatMulScratch& scratch);

// Activations prepared once for products with matrices of one kind (the
// step MatMul runs first: quantized to the weight type's dot partner): row t
// at (const uint8_t*)data + t * stride. A prepared row depends on its x row
// alone, so prepared rows may be copied and reordered (stride bytes each).
struct PreparedRows {
  const void* data = nullptr;
  size_t stride = 0;
};

// Prepares x's n_rows rows (ldx floats apart) for products with matrices like
// `w`, in scratch (valid until scratch's next use) or x itself for F32.
PreparedRows PrepareRowsFor(const WeightMatrix& w, const float* x, int64_t ldx, int64_t n_rows, ThreadPool& pool,
                            MatMulScratch& scratch);
// Whether a and b take the same prepared rows.
bool SamePreparedRows(const WeightMatrix& a, const WeightMatrix& b);

// MatMulGrouped on rows already prepared for the groups' matrices (e.g. a
// Mixture-of-Experts layer's tokens prepared once, then gathered per
// expert): the same bits as MatMulGrouped on the rows they were prepared from.
void MatMulGroupedPrepared(const MatMulGroup* groups, int64_t n_groups, PreparedRows x, int64_t n_rows,
                           ThreadPool& pool, MatMulScratch& scratch);

// As MatMulStrided / MatMulMany, with an explicit kernel table (tests and benchmarks).
void MatMulWith(const CpuKernels& k, const WeightMatrix& w, const float* x, int64_t ldx, int64_t n_tokens, float* y,
                int64_t ldy, ThreadPool& pool, MatMulScratch& scratch);
void MatMulManyWith(const CpuKernels& k, const MatMulOut* outs, int n_outs, const float* x, int64_t ldx,
                    int64_t n_tokens, ThreadPool& pool, MatMulScratch& scratch);
void MatMulGroupedWith(const CpuKernels& k, const MatMulGroup* groups, int64_t n_groups, const float* x, int64_t ldx,
                       int64_t n_rows, ThreadPool& pool, MatMulScratch& scratch);

}  // namespace pg
