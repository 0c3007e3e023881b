// Q4_Kx8 (repack.h): layout, and its GEMM kernels against the scalar
// reference (bit for bit) and the row-major Q4_K product.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <string>
#include <vector>

#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/repack.h"
#include "backend/cpu/test_util.h"

namespace pg {
namespace {

using testing::HostKernelTables;
using testing::RandomWeights;

struct Q4KMatrix {
  std::vector<uint8_t> bytes;
  WeightMatrix w;
};

Q4KMatrix MakeQ4K(int64_t rows, int64_t cols, uint32_t seed) {
  Q4KMatrix m;
  const std::vector<float> wf = RandomWeights(static_cast<size_t>(rows * cols), seed);
  const size_t rb = RowBytes(GgmlType::Q4_K, cols);
  m.bytes.resize(rb * static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r)
    EXPECT_TRUE(QuantizeRow(GgmlType::Q4_K, wf.data() + r * cols, m.bytes.data() + r * rb, cols).ok());
  // Extreme 6-bit scales and mins a file may hold: 63 for sub-block 0 of row 0.
  auto* b0 = reinterpret_cast<BlockQ4_K*>(m.bytes.data());
  b0->scales[0] = 63;
  b0->scales[4] = 63;
  m.w = MakeWeightMatrix(GgmlType::Q4_K, m.bytes.data(), rows, cols);
  return m;
}

TEST(RepackQ4_Kx8, EveryQuantScaleAndMinLandsInItsLane) {
  const int64_t rows = 11, cols = 512, nb = cols / kQKK;
  Q4KMatrix m = MakeQ4K(rows, cols, 1);
  ASSERT_TRUE(CanRepackQ4_Kx8(m.w));
  EXPECT_EQ(RepackedBytesQ4_Kx8(m.w), 2u * nb * sizeof(BlockQ4_Kx8));
  RepackedWeights store;
  const WeightMatrix v = store.Add(m.w, Avx2Kernels());  // the AVX2 table asks for Q4_Kx8
  EXPECT_EQ(v.layout, WeightLayout::kQ4_Kx8);
  EXPECT_EQ(store.Add(m.w, ScalarKernels()).layout, WeightLayout::kRowMajor);  // the scalar one does not
  EXPECT_TRUE(v.Validate().ok());
  EXPECT_FALSE(CanRepackQ4_Kx8(v));
  const auto* g = static_cast<const BlockQ4_Kx8*>(v.data);
  for (int64_t r = 0; r < 16; ++r) {
    for (int64_t b = 0; b < nb; ++b) {
      const BlockQ4_Kx8& blk = g[(r / 8) * nb + b];
      const int lane = static_cast<int>(r % 8);
      const BlockQ4_K* src = r < rows ? reinterpret_cast<const BlockQ4_K*>(m.bytes.data() + r * m.w.row_bytes) + b
                                      : nullptr;
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
        EXPECT_EQ(blk.qs[256 * p + 32 * (l / 4) + 4 * lane + l % 4], src ? src->qs[i] : 0) << r << " " << i;
      }
    }
  }
  std::vector<uint8_t> odd(RowBytes(GgmlType::Q4_0, 256) * 8);
  EXPECT_FALSE(CanRepackQ4_Kx8(MakeWeightMatrix(GgmlType::Q4_0, odd.data(), 8, 256)));
}

// Every level gives the scalar reference's bits for every tile shape (1-9
// tokens), partial groups and row ranges ending inside a group; the result is
// within float rounding of the row-major Q4_K product.
TEST(GemmQ4_Kx8, EveryLevelMatchesScalarBitForBit) {
  const int kind = static_cast<int>(WeightKind::kQ4_Kx8);
  for (int64_t rows : {8, 13, 64}) {
    const int64_t cols = 512;
    Q4KMatrix m = MakeQ4K(rows, cols, 7 + static_cast<uint32_t>(rows));
    RepackedWeights store;
    const WeightMatrix v = store.Add(m.w, Avx2Kernels());
    ASSERT_EQ(v.layout, WeightLayout::kQ4_Kx8);
    for (int64_t n_tok = 1; n_tok <= 9; ++n_tok) {
      const std::vector<float> x = RandomWeights(static_cast<size_t>(n_tok * cols), 99, 1.0f);
      std::vector<BlockQ8_K> xq(static_cast<size_t>(n_tok * cols / kQKK));
      for (int64_t t = 0; t < n_tok; ++t) ScalarKernels().quantize_q8_k(x.data() + t * cols, &xq[t * cols / kQKK], cols);
      const size_t xs = sizeof(BlockQ8_K) * cols / kQKK;
      std::vector<float> want(static_cast<size_t>(n_tok * rows), -1.0f);
      ScalarKernels().gemm[kind](v, xq.data(), xs, 0, n_tok, 0, rows, want.data(), rows);
      std::vector<float> rowmajor(want.size());
      ScalarKernels().gemm[static_cast<int>(WeightKind::kQ4_K)](m.w, xq.data(), xs, 0, n_tok, 0, rows,
                                                                rowmajor.data(), rows);
      for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(want[i], rowmajor[i], 1e-4f * (1 + std::fabs(want[i])));
      for (const CpuKernels* k : HostKernelTables()) {
        SCOPED_TRACE(std::string(IsaName(k->level)) + " rows " + std::to_string(rows) + " tokens " + std::to_string(n_tok));
        std::vector<float> got(want.size(), -2.0f);
        k->gemm[kind](v, xq.data(), xs, 0, n_tok, 0, rows, got.data(), rows);
        EXPECT_EQ(0, std::memcmp(got.data(), want.data(), want.size() * sizeof(float)));
        if (rows > 8) {
          std::vector<float> part(want.size(), -3.0f);
          k->gemm[kind](v, xq.data(), xs, 0, n_tok, 8, rows - 1, part.data(), rows);
          for (int64_t t = 0; t < n_tok; ++t)
            for (int64_t r = 0; r < rows; ++r)
              EXPECT_EQ(part[t * rows + r], (r >= 8 && r < rows - 1) ? want[t * rows + r] : -3.0f) << t << " " << r;
        }
      }
    }
  }
}

}  // namespace
}  // namespace pg
