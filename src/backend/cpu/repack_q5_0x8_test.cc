// Q5_0x8 (repack.h): the layout, its kernels at every level against the
// scalar reference, and its agreement with Q5_0 repacked as Q8_0x8.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/fp16.h"
#include "backend/cpu/repack.h"
#include "backend/cpu/test_util.h"

namespace pg {
namespace {

using testing::ExpectGemmBitsInRanges;
using testing::HostKernelTables;
using testing::QuantizeRandom;
using testing::RandomWeights;
using Q5Matrix = testing::QuantMatrix;

// rows x cols random Q5_0 weights; row 0's first block at level -16 in
// every column (nibble 0, fifth bit 0), the largest magnitude.
Q5Matrix MakeQ5(int64_t rows, int64_t cols, uint32_t seed) {
  Q5Matrix m = QuantizeRandom(GgmlType::Q5_0, rows, cols, seed);
  auto* b0 = reinterpret_cast<BlockQ5_0*>(m.bytes.data());
  std::memset(b0->qh, 0, sizeof b0->qh);
  std::memset(b0->qs, 0, sizeof b0->qs);
  return m;
}

// The level of (row lane, column i) of a block, read back from the layout.
int LevelAt(const BlockQ5_0x8& blk, int lane, int i) {
  const int h = i / 16, k = (i % 16) / 4, j = i % 4;
  const uint8_t byte = blk.qs[32 * k + 4 * lane + j];
  const int nibble = h == 0 ? (byte & 0x0F) : (byte >> 4);
  return nibble - 16 * static_cast<int>((blk.low16[k][h] >> (4 * lane + j)) & 1u);
}

TEST(RepackQ5_0x8, EveryLevelAndScaleLandsInItsLane) {
  const int64_t rows = 13, cols = 128, nb = cols / kQK;
  Q5Matrix m = MakeQ5(rows, cols, 21);
  ASSERT_TRUE(CanRepackQ5_0x8(m.w));
  EXPECT_EQ(RepackedBytesQ5_0x8(m.w), 2u * nb * sizeof(BlockQ5_0x8));
  std::vector<uint8_t> buf(RepackedBytesQ5_0x8(m.w));
  const WeightMatrix v = RepackQ5_0x8(m.w, buf.data());
  EXPECT_EQ(v.layout, WeightLayout::kQ5_0x8);
  EXPECT_EQ(v.type, GgmlType::Q5_0);
  EXPECT_EQ(WeightKindOf(v), WeightKind::kQ5_0x8);
  EXPECT_TRUE(v.Validate().ok());
  const auto* g = static_cast<const BlockQ5_0x8*>(v.data);
  std::vector<float> want(cols);
  for (int64_t r = 0; r < 16; ++r) {  // rows 13..15 are padding: zero
    if (r < rows) {
      ASSERT_TRUE(DequantizeRow(GgmlType::Q5_0, m.bytes.data() + r * m.w.row_bytes, want.data(), cols).ok());
    }
    for (int64_t c = 0; c < cols; ++c) {
      const BlockQ5_0x8& blk = g[(r / 8) * nb + c / kQK];
      const int lane = static_cast<int>(r % 8), i = static_cast<int>(c % kQK);
      const float got = F16ToF32(blk.d[lane]) * static_cast<float>(LevelAt(blk, lane, i));
      EXPECT_EQ(got, r < rows ? want[c] : 0.0f) << r << " " << c;
    }
  }
}

// Only a table with a Q5_0x8 SIMD kernel asks for the layout; the others keep
// Q5_0 as Q8_0x8.
TEST(RepackQ5_0x8, ChosenWhereTheTableAsks) {
  Q5Matrix m = MakeQ5(8, 64, 3);
  for (const CpuKernels* k : HostKernelTables()) {
    RepackedWeights store;
    const WeightMatrix v = store.Add(m.w, *k);
    EXPECT_EQ(v.layout, k->q5_0x8 ? WeightLayout::kQ5_0x8 : WeightLayout::kQ8_0x8) << IsaName(k->level);
  }
}

// Every level gives the scalar reference's bits for every tile shape (1-9
// tokens), partial groups, odd group counts and row ranges starting and ending
// inside a group or a pair of groups (ExpectGemmBitsInRanges), and those are
// the bits of Q5_0 repacked as Q8_0x8 (the same arithmetic).
TEST(GemmQ5_0x8, EveryLevelMatchesScalarAndQ8_0x8BitForBit) {
  const int kind = static_cast<int>(WeightKind::kQ5_0x8);
  for (int64_t rows : {8, 13, 24, 40, 64}) {
    const int64_t cols = 256, nb = cols / kQK;
    Q5Matrix m = MakeQ5(rows, cols, 7 + static_cast<uint32_t>(rows));
    std::vector<uint8_t> buf(RepackedBytesQ5_0x8(m.w)), buf8(RepackedBytesQ8_0x8(m.w));
    const WeightMatrix v = RepackQ5_0x8(m.w, buf.data());
    const WeightMatrix v8 = RepackQ5_0AsQ8_0x8(m.w, buf8.data());
    for (int64_t n_tok = 1; n_tok <= 9; ++n_tok) {
      std::vector<float> x = RandomWeights(static_cast<size_t>(n_tok * cols), 99, 1.0f);
      // Token 0's first block quantizes to -127 in every column: with row 0's
      // levels of -16, the largest block sums a kernel's int16 partials see.
      std::fill(x.begin(), x.begin() + kQK, -1.0f);
      std::vector<BlockQ8_0> xq(static_cast<size_t>(n_tok * nb));
      for (int64_t t = 0; t < n_tok; ++t) ScalarKernels().quantize_q8_0(x.data() + t * cols, &xq[t * nb], cols);
      const size_t xs = sizeof(BlockQ8_0) * nb;
      std::vector<float> want(static_cast<size_t>(n_tok * rows), -1.0f), as_q8(want.size(), -1.0f);
      ScalarKernels().gemm[kind](v, xq.data(), xs, 0, n_tok, 0, rows, want.data(), rows);
      ScalarKernels().gemm[static_cast<int>(WeightKind::kQ8_0x8)](v8, xq.data(), xs, 0, n_tok, 0, rows, as_q8.data(),
                                                                  rows);
      EXPECT_EQ(0, std::memcmp(want.data(), as_q8.data(), want.size() * sizeof(float)));
      for (const CpuKernels* k : HostKernelTables()) {
        SCOPED_TRACE(std::string(IsaName(k->level)) + " rows " + std::to_string(rows) + " tokens " +
                     std::to_string(n_tok));
        ExpectGemmBitsInRanges(k->gemm[kind], v, xq.data(), xs, n_tok, rows, want);
      }
    }
  }
}

// Through MatMul: a token's row is the same bits alone and in a batch, on any
// thread count, at every level.
TEST(GemmQ5_0x8, MatMulIsBatchInvariant) {
  const int64_t rows = 203, cols = 512, n_tok = 37;
  Q5Matrix m = MakeQ5(rows, cols, 5);
  std::vector<uint8_t> buf(RepackedBytesQ5_0x8(m.w));
  const WeightMatrix v = RepackQ5_0x8(m.w, buf.data());
  const std::vector<float> x = RandomWeights(static_cast<size_t>(n_tok * cols), 6, 1.0f);
  for (const CpuKernels* k : HostKernelTables()) {
    SCOPED_TRACE(IsaName(k->level));
    MatMulScratch scratch;
    ThreadPool one(1), three(3);
    std::vector<float> batch(static_cast<size_t>(n_tok * rows)), single(static_cast<size_t>(rows));
    MatMulWith(*k, v, x.data(), cols, n_tok, batch.data(), rows, three, scratch);
    for (int64_t t = 0; t < n_tok; ++t) {
      MatMulWith(*k, v, x.data() + t * cols, cols, 1, single.data(), rows, one, scratch);
      ASSERT_EQ(0, std::memcmp(single.data(), batch.data() + t * rows, rows * sizeof(float))) << "token " << t;
    }
  }
}

}  // namespace
}  // namespace pg
