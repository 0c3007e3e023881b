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
// Q4_Kx8 groups 8 consecutive rows of Q4_K. For each group and each 256-column
// super-block it stores the 8 rows' f16 d and dmin, their 6-bit sub-block
// scales and mins already unpacked (GetScaleMinK4), and their quants with the
// Q4_K byte pairing kept (byte l of pair p holds sub-block 2p's column l in
// its low nibble and sub-block 2p + 1's in its high nibble), interleaved 4
// bytes at a time as in Q8_0x8:
//
//   BlockQ4_Kx8 { d[8]; dmin[8]; sc[8 sub-blocks][8 rows];
//                 m[4 pairs][8 rows][2]; qs[1024] }
//   qs[256 * p + 32 * k + 4 * r + i] = row r's Q4_K qs[32 * p + 4 * k + i]
//
// so one 32-byte load holds 4 columns of two sub-blocks for all 8 rows, one
// row per 32-bit lane (148 bytes per row and super-block; Q4_K has 144). Per
// row and token the kernels sum the super-block exactly in int32
// (isum = sum_j sc_j q.x_j, msum = sum_j m_j bsum_j) and then do two f32 FMAs:
// acc = fma(d*xd, isum, acc); acc = fma(-(dmin*xd), msum, acc)
// (scalar::GemmQ4_Kx8 defines the arithmetic).
//
// Q6_Kx8 groups 8 rows of Q6_K the same way, at Q6_K's 210 bytes per row and
// super-block: the 8 rows' f16 d, their int8 scales [16 sub-blocks][8 rows],
// and ql / qh interleaved 4 bytes per row:
//
//   BlockQ6_Kx8 { d[8]; sc[16][8]; ql[1024]; qh[512] }
//   ql[512 * h + 256 * c + 32 * k + 4 * r + i] = row r's ql[64 * h + 32 * c + 4 * k + i]
//   qh[256 * h + 32 * k + 4 * r + i]           = row r's qh[32 * h + 4 * k + i]
//
// Per row and token: isum = sum_j sc_j q.x_j - 32 sum_j sc_j bsum_j, exact in
// int32, then acc = fma(d*xd, isum, acc) (scalar::GemmQ6_Kx8).
//
// Q5_0x8 groups 8 rows of Q5_0 and keeps Q5_0's 22 bytes per row and block
// (5.5 bits per weight, where Q5_0 as Q8_0x8 reads 8.5): per 32-column block
// the 8 rows' f16 scales, the fifth bits as byte masks, and the nibbles
// interleaved 4 bytes per row as Q8_0x8 (Q5_0's byte j holds column j in its
// low nibble and column j + 16 in its high nibble):
//
//   BlockQ5_0x8 { d[8]; low16[4][2]; qs[128] }
//   qs[32 * k + 4 * r + i]       = row r's Q5_0 qs[4 * k + i]
//   bit 4r + i of low16[k][h]    = 1 if row r's level at column 16h + 4k + i
//                                  is below 16 (its fifth bit is 0)
//
// so the signed level q - 16 of a 32-byte load's half h is its nibble, minus
// 16 where the mask bit is set: one masked byte subtract (AVX-512BW; AVX2
// spreads the mask bits to bytes with a shuffle and a compare). Per row
// and token a block's sum is exact in int32 and added with one FMA, the same
// arithmetic as Q5_0 repacked as Q8_0x8 (scalar::GemmQ5_0x8), so both give
// the same bits.
//
// Q5_Kx8 is Q4_Kx8 plus Q5_K's fifth bits, interleaved 4 bytes per row as
// the quants (Q5_K's qh[l] holds column l's fifth bit of sub-block j in bit j):
//
//   BlockQ5_Kx8 { d[8]; dmin[8]; sc[8][8]; m[4][8][2]; qs[1024]; qh[256] }
//   qh[32 * k + 4 * r + i] = row r's Q5_K qh[4 * k + i]
//
// so the qh load k pairs with every qs load 32 * k of each sub-block pair p,
// its bits 2p and 2p + 1 the fifth bits of the low and high nibbles (180
// bytes per row and super-block; Q5_K has 176). The arithmetic is Q4_Kx8's
// with levels 0..31 (scalar::GemmQ5_Kx8).
//
// FP8x4 groups 4 consecutive rows of FP8_E4M3: per 64-column block the 4
// rows' f32 scales, then their 64 E4M3 bytes one row after the other:
//
//   BlockFP8x4 { d[4]; q[4][64] }   q[r][i] = row r's q[i] of the block
//
// 68 bytes per row and block, as row-major. A row's arithmetic is the
// row-major kernels' (same loads, same FMA chains), so the results are the
// row-major bits; a 4-row tile reads one contiguous stream instead of four
// short ones (a 0.5b-shape row is 952 bytes), which the hardware prefetcher
// follows (docs/performance.md, "FP8 weights").
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
#include "base/large_alloc.h"
#include "base/thread_pool.h"

namespace pg {

constexpr int kQ8_0x8Rows = 8;

struct BlockQ8_0x8 {
  uint16_t d[kQ8_0x8Rows];       // f16 scale of each row's block
  int8_t qs[kQ8_0x8Rows * kQK];  // see above
};
static_assert(sizeof(BlockQ8_0x8) == 272);

// Whether `w` can be repacked into Q8_0x8 (a row-major Q8_0 matrix).
bool CanRepackQ8_0x8(const WeightMatrix& w);

// Bytes RepackQ8_0x8 (or RepackQ5_0AsQ8_0x8) writes for `w`.
size_t RepackedBytesQ8_0x8(const WeightMatrix& w);

// Writes `w` (CanRepackQ8_0x8) into `dst` (RepackedBytesQ8_0x8 bytes) and
// returns the view of it: same type, rows, cols and row_bytes, layout kQ8_0x8.
WeightMatrix RepackQ8_0x8(const WeightMatrix& w, void* dst);

// A Q5_0 block is exactly a Q8_0 block with levels q - 16 in [-16, 15] and
// the same f16 scale, so a row-major Q5_0 matrix is repacked into Q8_0x8
// losslessly (the view's type is then Q8_0, its row_bytes at least a Q8_0
// row's) and runs the Q8_0x8 kernels: 55% more bytes than Q5_0, but 2-3x the
// speed of its own kernels (docs/performance.md, "Weight types").
bool CanRepackQ5_0AsQ8_0x8(const WeightMatrix& w);
WeightMatrix RepackQ5_0AsQ8_0x8(const WeightMatrix& w, void* dst);

constexpr int kQ5_0x8Rows = 8;

struct BlockQ5_0x8 {
  uint16_t d[kQ5_0x8Rows];     // f16 scale of each row's block
  uint32_t low16[kQK / 8][2];  // [load k][half h], see above
  uint8_t qs[kQ5_0x8Rows * kQK / 2];
};
static_assert(sizeof(BlockQ5_0x8) == 8 * 22);

// Whether `w` can be repacked into Q5_0x8 (a row-major Q5_0 matrix).
bool CanRepackQ5_0x8(const WeightMatrix& w);
size_t RepackedBytesQ5_0x8(const WeightMatrix& w);
WeightMatrix RepackQ5_0x8(const WeightMatrix& w, void* dst);

constexpr int kQ4_Kx8Rows = 8;

struct BlockQ4_Kx8 {
  uint16_t d[kQ4_Kx8Rows];             // f16 scale of each row's sub-block scales
  uint16_t dmin[kQ4_Kx8Rows];          // f16 scale of each row's sub-block mins
  uint8_t sc[8][kQ4_Kx8Rows];          // [sub-block][row], 6 bits
  uint8_t m[4][kQ4_Kx8Rows][2];        // [sub-block pair][row][which of the pair], 6 bits
  uint8_t qs[kQ4_Kx8Rows * kQKK / 2];  // see above
};
static_assert(sizeof(BlockQ4_Kx8) == 8 * 148);

// Whether `w` can be repacked into Q4_Kx8 (a row-major Q4_K matrix).
bool CanRepackQ4_Kx8(const WeightMatrix& w);
size_t RepackedBytesQ4_Kx8(const WeightMatrix& w);
WeightMatrix RepackQ4_Kx8(const WeightMatrix& w, void* dst);

struct BlockQ6_Kx8 {
  uint16_t d[kQ4_Kx8Rows];
  int8_t sc[16][kQ4_Kx8Rows];          // [sub-block of 16][row]
  uint8_t ql[kQ4_Kx8Rows * kQKK / 2];  // see above
  uint8_t qh[kQ4_Kx8Rows * kQKK / 4];
};
static_assert(sizeof(BlockQ6_Kx8) == 8 * 210);

// Whether `w` can be repacked into Q6_Kx8 (a row-major Q6_K matrix).
bool CanRepackQ6_Kx8(const WeightMatrix& w);
size_t RepackedBytesQ6_Kx8(const WeightMatrix& w);
WeightMatrix RepackQ6_Kx8(const WeightMatrix& w, void* dst);

struct BlockQ5_Kx8 {
  uint16_t d[kQ4_Kx8Rows];
  uint16_t dmin[kQ4_Kx8Rows];
  uint8_t sc[8][kQ4_Kx8Rows];  // as BlockQ4_Kx8
  uint8_t m[4][kQ4_Kx8Rows][2];
  uint8_t qs[kQ4_Kx8Rows * kQKK / 2];
  uint8_t qh[kQ4_Kx8Rows * kQKK / 8];  // see above
};
static_assert(sizeof(BlockQ5_Kx8) == 8 * 180);

// Whether `w` can be repacked into Q5_Kx8 (a row-major Q5_K matrix).
bool CanRepackQ5_Kx8(const WeightMatrix& w);
size_t RepackedBytesQ5_Kx8(const WeightMatrix& w);
WeightMatrix RepackQ5_Kx8(const WeightMatrix& w, void* dst);
// Row `row` of a Q5_Kx8 view as the Q5_K blocks it was repacked from (nb =
// cols / 256 of them; a padding row gives zero blocks): the inverse of the
// repack, for checks.
void UnpackRowQ5_Kx8(const WeightMatrix& v, int64_t row, BlockQ5_K* out);

constexpr int kHalf4Rows = 4;
constexpr int kHalf4Cols = 32;

// Whether `w` can be repacked into Half4 (a row-major F16 or BF16 matrix
// whose cols are a multiple of 32).
bool CanRepackHalf4(const WeightMatrix& w);
size_t RepackedBytesHalf4(const WeightMatrix& w);
WeightMatrix RepackHalf4(const WeightMatrix& w, void* dst);

constexpr int kFP8x4Rows = 4;

struct BlockFP8x4 {
  float d[kFP8x4Rows];           // each row's block scale
  uint8_t q[kFP8x4Rows][kQKNV];  // each row's E4M3 bytes
};
static_assert(sizeof(BlockFP8x4) == 4 * sizeof(BlockFP8_E4M3));

// Whether `w` can be repacked into FP8x4 (a row-major FP8_E4M3 matrix).
bool CanRepackFP8x4(const WeightMatrix& w);
size_t RepackedBytesFP8x4(const WeightMatrix& w);
WeightMatrix RepackFP8x4(const WeightMatrix& w, void* dst);

// Bytes from the start of view `v` (any layout) to its row `row`, which must
// start a group of v's layout (a multiple of 8 rows, 4 for Half4 and FP8x4; any row for
// row-major). A stack of equal matrices repacked as one (each a whole number
// of groups, e.g. a layer's experts) thus finds matrix i at i * this offset.
size_t GroupOffset(const WeightMatrix& v, int64_t row);

// Owns the repacked copies of a model's matrices.
class RepackedWeights {
 public:
  // Repacks `w` if it can be repacked (Q8_0 -> Q8_0x8; FP8_E4M3 -> FP8x4
  // where `k` asks for it, CpuKernels::fp8x4; Q5_0 -> Q5_0x8 where
  // `k` asks for it, CpuKernels::q5_0x8, else Q8_0x8; Q4_K -> Q4_Kx8,
  // Q5_K -> Q5_Kx8 and Q6_K -> Q6_Kx8 where `k` asks for it,
  // CpuKernels::k_quant_x8; F16 /
  // BF16 -> Half4 where `k` asks
  // for it, CpuKernels::half4_*), into memory owned here, and
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
  void* Allocate(size_t bytes);  // 64-byte aligned, owned here

  std::vector<LargeBuffer<>> buffers_;
  size_t bytes_ = 0;
};

}  // namespace pg
