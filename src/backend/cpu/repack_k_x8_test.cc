// Q4_Kx8, Q5_Kx8 and Q6_Kx8 (repack.h): layouts, and their GEMM kernels
// against the scalar reference (bit for bit) and the row-major product.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/repack.h"
#include "backend/cpu/test_util.h"

namespace pg {
namespace {

using testing::ExpectGemmBitsInRanges;
using testing::HostKernelTables;
using testing::RandomWeights;
using KMatrix = testing::QuantMatrix;

KMatrix MakeK(GgmlType type, int64_t rows, int64_t cols, uint32_t seed) {
  KMatrix m = testing::QuantizeRandom(type, rows, cols, seed);
  if (type == GgmlType::Q4_K) {
    // Extreme 6-bit scales and mins a file may hold: 63 for sub-block 0 of
    // row 0; and level 15 in every column of row 0's first super-block.
    auto* b0 = reinterpret_cast<BlockQ4_K*>(m.bytes.data());
    b0->scales[0] = 63;
    b0->scales[4] = 63;
    std::memset(b0->qs, 0xFF, sizeof b0->qs);
  } else if (type == GgmlType::Q5_K) {
    // As Q4_K, and level 31 in every column of row 0's first super-block.
    auto* b0 = reinterpret_cast<BlockQ5_K*>(m.bytes.data());
    b0->scales[0] = 63;
    b0->scales[4] = 63;
    std::memset(b0->qh, 0xFF, sizeof b0->qh);
    std::memset(b0->qs, 0xFF, sizeof b0->qs);
  } else {
    // Extreme int8 scales: -128 and 127.
    auto* b0 = reinterpret_cast<BlockQ6_K*>(m.bytes.data());
    b0->scales[0] = -128;
    b0->scales[15] = 127;
  }
  return m;
}
KMatrix MakeQ4K(int64_t rows, int64_t cols, uint32_t seed) { return MakeK(GgmlType::Q4_K, rows, cols, seed); }

// Q4_Kx8 and Q5_Kx8 share the lanes of d, dmin, the 6-bit scales and mins
// and the low nibbles: lane `lane` of blk holds src's (zeros for padding).
template <typename BlockX8, typename Block>
void ExpectK4LaneMatches(const BlockX8& blk, int lane, const Block* src) {
  EXPECT_EQ(blk.d[lane], src ? src->d : 0);
  EXPECT_EQ(blk.dmin[lane], src ? src->dmin : 0);
  for (int j = 0; j < 8; ++j) {
    uint8_t sc = 0, mn = 0;
    if (src) GetScaleMinK4(j, src->scales, &sc, &mn);
    EXPECT_EQ(blk.sc[j][lane], sc);
    EXPECT_EQ(blk.m[j / 2][lane][j % 2], mn);
  }
  for (int i = 0; i < kQKK / 2; ++i) {
    const int p = i / 32, l = i % 32;
    EXPECT_EQ(blk.qs[256 * p + 32 * (l / 4) + 4 * lane + l % 4], src ? src->qs[i] : 0) << i;
  }
}

TEST(RepackQ4_Kx8, EveryQuantScaleAndMinLandsInItsLane) {
  const int64_t rows = 11, cols = 512, nb = cols / kQKK;
  KMatrix m = MakeQ4K(rows, cols, 1);
  ASSERT_TRUE(CanRepackQ4_Kx8(m.w));
  EXPECT_EQ(RepackedBytesQ4_Kx8(m.w), 2u * nb * sizeof(BlockQ4_Kx8));
  RepackedWeights store;
  const WeightMatrix v = testing::RepackForAvx2(store, m.w, WeightLayout::kQ4_Kx8);
  EXPECT_FALSE(CanRepackQ4_Kx8(v));
  const auto lane_matches = [](const BlockQ4_Kx8& blk, int lane, const BlockQ4_K* src) {
    ExpectK4LaneMatches(blk, lane, src);
  };
  testing::ForEachRepackedLane<BlockQ4_Kx8, BlockQ4_K>(v, m, nb, lane_matches);
  std::vector<uint8_t> odd(RowBytes(GgmlType::Q4_0, 256) * 8);
  EXPECT_FALSE(CanRepackQ4_Kx8(MakeWeightMatrix(GgmlType::Q4_0, odd.data(), 8, 256)));
}

TEST(RepackQ6_Kx8, EveryQuantAndScaleLandsInItsLane) {
  const int64_t rows = 11, cols = 512, nb = cols / kQKK;
  KMatrix m = MakeK(GgmlType::Q6_K, rows, cols, 2);
  ASSERT_TRUE(CanRepackQ6_Kx8(m.w));
  EXPECT_EQ(RepackedBytesQ6_Kx8(m.w), 2u * nb * sizeof(BlockQ6_Kx8));
  RepackedWeights store;
  const WeightMatrix v = testing::RepackForAvx2(store, m.w, WeightLayout::kQ6_Kx8);
  const auto lane_matches = [](const BlockQ6_Kx8& blk, int lane, const BlockQ6_K* src) {
    EXPECT_EQ(blk.d[lane], src ? src->d : 0);
    for (int j = 0; j < 16; ++j) EXPECT_EQ(blk.sc[j][lane], src ? src->scales[j] : 0);
    for (int i = 0; i < kQKK / 2; ++i) {
      const int h = i / 64, c = (i % 64) / 32, l = i % 32;
      EXPECT_EQ(blk.ql[512 * h + 256 * c + 32 * (l / 4) + 4 * lane + l % 4], src ? src->ql[i] : 0) << i;
    }
    for (int i = 0; i < kQKK / 4; ++i) {
      const int h = i / 32, l = i % 32;
      EXPECT_EQ(blk.qh[256 * h + 32 * (l / 4) + 4 * lane + l % 4], src ? src->qh[i] : 0) << i;
    }
  };
  testing::ForEachRepackedLane<BlockQ6_Kx8, BlockQ6_K>(v, m, nb, lane_matches);
}

TEST(RepackQ5_Kx8, EveryQuantScaleMinAndFifthBitLandsInItsLane) {
  const int64_t rows = 11, cols = 512, nb = cols / kQKK;
  KMatrix m = MakeK(GgmlType::Q5_K, rows, cols, 3);
  ASSERT_TRUE(CanRepackQ5_Kx8(m.w));
  EXPECT_EQ(RepackedBytesQ5_Kx8(m.w), 2u * nb * sizeof(BlockQ5_Kx8));
  RepackedWeights store;
  const WeightMatrix v = testing::RepackForAvx2(store, m.w, WeightLayout::kQ5_Kx8);
  EXPECT_EQ(WeightKindOf(v), WeightKind::kQ5_Kx8);
  EXPECT_FALSE(CanRepackQ5_Kx8(v));
  const auto lane_matches = [](const BlockQ5_Kx8& blk, int lane, const BlockQ5_K* src) {
    ExpectK4LaneMatches(blk, lane, src);
    for (int l = 0; l < kQKK / 8; ++l) EXPECT_EQ(blk.qh[32 * (l / 4) + 4 * lane + l % 4], src ? src->qh[l] : 0) << l;
  };
  testing::ForEachRepackedLane<BlockQ5_Kx8, BlockQ5_K>(v, m, nb, lane_matches);
  // The inverse gives every row's blocks back byte for byte (so the same
  // dequantized values), and zero blocks for the padding rows.
  std::vector<BlockQ5_K> row(static_cast<size_t>(nb));
  for (int64_t r = 0; r < 16; ++r) {
    UnpackRowQ5_Kx8(v, r, row.data());
    const std::vector<uint8_t> zero(sizeof(BlockQ5_K) * nb, 0);
    const void* want = r < rows ? m.bytes.data() + r * m.w.row_bytes : zero.data();
    EXPECT_EQ(0, std::memcmp(row.data(), want, sizeof(BlockQ5_K) * nb)) << "row " << r;
  }
}

// A stack of experts repacked as one matrix (model_weights.cc) holds each
// expert's matrix repacked alone at GroupOffset.
TEST(RepackQ5_Kx8, EachExpertOfAStackIsThatExpertRepacked) {
  const int64_t rows = 24, cols = 512, n_expert = 3;
  KMatrix m = MakeK(GgmlType::Q5_K, rows * n_expert, cols, 4);
  RepackedWeights store;
  const WeightMatrix stack = store.Add(m.w, Avx2Kernels());
  const size_t bytes = RepackedBytesQ5_Kx8(MakeWeightMatrix(GgmlType::Q5_K, m.bytes.data(), rows, cols));
  ASSERT_EQ(GroupOffset(stack, rows), bytes);
  for (int64_t e = 0; e < n_expert; ++e) {
    const WeightMatrix one = MakeWeightMatrix(GgmlType::Q5_K, m.bytes.data() + e * rows * m.w.row_bytes, rows, cols);
    const WeightMatrix alone = store.Add(one, Avx2Kernels());
    EXPECT_EQ(0, std::memcmp(static_cast<const uint8_t*>(stack.data) + e * bytes, alone.data, bytes)) << e;
  }
}

// Every level gives the scalar reference's bits for every tile shape (1-9
// tokens, one 8-row group or a pair of them), partial groups, odd group
// counts and row ranges starting and ending inside a group or a pair
// (ExpectGemmBitsInRanges); the result is within float rounding of the
// row-major product.
void CheckKernels(GgmlType type, WeightKind kx8, WeightKind row_kind) {
  const int kind = static_cast<int>(kx8);
  for (int64_t rows : {8, 13, 24, 40, 64}) {
    const int64_t cols = 512;
    KMatrix m = MakeK(type, rows, cols, 7 + static_cast<uint32_t>(rows));
    RepackedWeights store;
    const WeightMatrix v = store.Add(m.w, Avx2Kernels());
    ASSERT_EQ(WeightKindOf(v), kx8);
    for (int64_t n_tok = 1; n_tok <= 9; ++n_tok) {
      std::vector<float> x = RandomWeights(static_cast<size_t>(n_tok * cols), 99, 1.0f);
      // Token 0's first super-block quantizes to -128 in every column: with
      // row 0's top levels, the largest sums a kernel's int16 partials see.
      std::fill(x.begin(), x.begin() + kQKK, -1.0f);
      std::vector<BlockQ8_K> xq(static_cast<size_t>(n_tok * cols / kQKK));
      for (int64_t t = 0; t < n_tok; ++t)
        ScalarKernels().quantize_q8_k(x.data() + t * cols, &xq[t * cols / kQKK], cols);
      const size_t xs = sizeof(BlockQ8_K) * cols / kQKK;
      std::vector<float> want(static_cast<size_t>(n_tok * rows), -1.0f);
      ScalarKernels().gemm[kind](v, xq.data(), xs, 0, n_tok, 0, rows, want.data(), rows);
      std::vector<float> rowmajor(want.size());
      ScalarKernels().gemm[static_cast<int>(row_kind)](m.w, xq.data(), xs, 0, n_tok, 0, rows, rowmajor.data(), rows);
      for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(want[i], rowmajor[i], 1e-4f * (1 + std::fabs(want[i])));
      for (const CpuKernels* k : HostKernelTables()) {
        SCOPED_TRACE(std::string(IsaName(k->level)) + " " + TypeName(type) + " rows " + std::to_string(rows) +
                     " tokens " + std::to_string(n_tok));
        ExpectGemmBitsInRanges(k->gemm[kind], v, xq.data(), xs, n_tok, rows, want);
      }
    }
  }
}

TEST(GemmQ4_Kx8, EveryLevelMatchesScalarBitForBit) {
  CheckKernels(GgmlType::Q4_K, WeightKind::kQ4_Kx8, WeightKind::kQ4_K);
}

TEST(GemmQ5_Kx8, EveryLevelMatchesScalarBitForBit) {
  CheckKernels(GgmlType::Q5_K, WeightKind::kQ5_Kx8, WeightKind::kQ5_K);
}

TEST(GemmQ6_Kx8, EveryLevelMatchesScalarBitForBit) {
  CheckKernels(GgmlType::Q6_K, WeightKind::kQ6_Kx8, WeightKind::kQ6_K);
}

}  // namespace
}  // namespace pg
