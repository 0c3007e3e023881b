// Repacked weight layouts: a GGUF matrix rearranged once, at load, into the
// order its GEMV/GEMM kernels read it.
//
// Q8_0x8 groups 8 consecutive rows. For each group and each 32-column block
// it stores the 8 rows' f16 scales, then the 8 rows' 32 quants interleaved
// 4 columns at a time:
//
//   BlockQ8_0x8 { d[8]; qs[256] }   qs[32 * k + 4 * r + i] = row r, column 4k + i
//
// so one 32-byte load holds columns 4k..4k+3 of all 8 rows, each in its own
// 32-bit lane, and a whole matrix is read as one sequential stream. The
// kernels sum each row's block exactly in int32 and add it with one f32 FMA
// per block (scalar::GemmQ8_0x8 defines the arithmetic).
//
// Half4 (F16 or BF16) groups 4 consecutive rows, 32 columns (one 64-byte line
// per row) at a time: element (r, c) is at index
// 128 * (c / 32) + 32 * (r % 4) + c % 32 of its group's cols * 4 elements.
// A row's 8 columns are still one 16-byte load and its sum the same FMA chain
// as row-major, so the results are the row-major kernels' bits; only the order
// in which memory is read changes: a GEMV reads the 4 rows as one stream, and
// a GEMM tile (4 rows x 3 tokens) one contiguous range. (Groups of 8 rows were
// slower for prefill: a 4-row tile then reads every other 256 bytes, and those
// lines crowd a few L1 sets.)
//
// A group at the end of a matrix whose row count is not a multiple of its
// group size is padded with zero rows.
//
// Thread-safety: pure functions; a RepackedWeights belongs to its owner.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/matmul.h"
#include "backend/cpu/quant.h"
#include "base/function_ref.h"
#include "base/thread_pool.h"

namespace pg {

constexpr int kQ8_0x8Rows = 8;

struct BlockQ8_0x8 {
  uint16_t d[kQ8_0x8Rows];        // f16 scale of each row's block
  int8_t qs[kQ8_0x8Rows * kQK];   // see above
};
static_assert(sizeof(BlockQ8_0x8) == 272);

// Whether `w` can be repacked into Q8_0x8 (a row-major Q8_0 matrix).
bool CanRepackQ8_0x8(const WeightMatrix& w);

// Bytes RepackQ8_0x8 writes for `w`.
size_t RepackedBytesQ8_0x8(const WeightMatrix& w);

// Writes `w` (CanRepackQ8_0x8) into `dst` (RepackedBytesQ8_0x8 bytes) and
// returns the view of it: same type, rows, cols and row_bytes, layout kQ8_0x8.
WeightMatrix RepackQ8_0x8(const WeightMatrix& w, void* dst);

constexpr int kHalf4Rows = 4;
constexpr int kHalf4Cols = 32;

// Whether `w` can be repacked into Half4 (a row-major F16 or BF16 matrix
// whose cols are a multiple of 32).
bool CanRepackHalf4(const WeightMatrix& w);
size_t RepackedBytesHalf4(const WeightMatrix& w);
WeightMatrix RepackHalf4(const WeightMatrix& w, void* dst);

// Owns the repacked copies of a model's matrices.
class RepackedWeights {
 public:
  // Repacks `w` if it can be repacked (Q8_0 -> Q8_0x8; F16 / BF16 -> Half4
  // where `k` asks for it, CpuKernels::half4_*), into memory owned here, and
  // returns the repacked view; returns `w` unchanged otherwise.
  WeightMatrix Add(const WeightMatrix& w, const CpuKernels& k);
  // Add() for every matrix in `ms`, replacing each with what Add returns; the
  // copies run in parallel on `pool` (a model's repack is memory-bound: ~2 s
  // for 1.4 GB on one core). After each copy, on the thread that made it,
  // `copied(i, source)` is called with the matrix's index in `ms` and its
  // original view (e.g. to release the source's pages right away).
  void AddAll(const std::vector<WeightMatrix*>& ms, ThreadPool& pool, const CpuKernels& k,
              FunctionRef<void(size_t, const WeightMatrix&)> copied);
  // Bytes held.
  size_t bytes() const { return bytes_; }

 private:
  struct FreeDeleter {
    void operator()(void* p) const;
  };
  void* Allocate(size_t bytes);  // 64-byte aligned, owned here

  std::vector<std::unique_ptr<void, FreeDeleter>> buffers_;
  size_t bytes_ = 0;
};

}  // namespace pg
