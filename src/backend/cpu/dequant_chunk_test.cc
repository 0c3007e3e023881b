#include "backend/cpu/dequant_chunk.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "backend/cpu/cpu_features.h"
#include "backend/cpu/quant.h"
#include "backend/cpu/test_util.h"

namespace pg {
namespace {

// Every SIMD version against DequantizeRow, bit for bit, on rows quantized
// from random values (with outliers) and on raw random bytes (every bit
// pattern of the scales and levels, f16 scales included).
TEST(DequantizeChunk, Avx2MatchesTheScalarReferenceBitForBit) {
  if (!HostSupports(IsaLevel::kAvx2)) GTEST_SKIP() << "no AVX2";
  for (GgmlType type : {GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K}) {
    SCOPED_TRACE(TypeName(type));
    const int64_t n = 4 * kQKK;
    const size_t bytes = RowBytes(type, n);
    for (int trial = 0; trial < 2; ++trial) {
      std::vector<uint8_t> row(bytes);
      if (trial == 0) {
        const std::vector<float> src = testing::RandomWeights(static_cast<size_t>(n), 21);
        ASSERT_TRUE(QuantizeRow(type, src.data(), row.data(), n).ok());
      } else {
        const std::vector<float> r = testing::RandomFloats(bytes, 22, 0.0f, 256.0f);
        for (size_t i = 0; i < bytes; ++i) row[i] = static_cast<uint8_t>(r[i]);
        // Keep the f16 scales finite (an exponent of all ones is inf/NaN).
        const size_t block = InfoOf(type).block_bytes, nblocks = bytes / block;
        for (size_t b = 0; b < nblocks; ++b) {
          uint8_t* blk = row.data() + b * block;
          if (type == GgmlType::Q8_0 || type == GgmlType::Q4_K) blk[1] &= 0x3B;
          if (type == GgmlType::Q4_K) blk[3] &= 0x3B;
          if (type == GgmlType::Q6_K) blk[209] &= 0x3B;
        }
      }
      std::vector<float> want(static_cast<size_t>(n)), got(static_cast<size_t>(n), -1.0f);
      DequantizeChunkScalar(type, row.data(), want.data(), n);
      ASSERT_TRUE(avx2::DequantizeChunk(type, row.data(), got.data(), n));
      for (int64_t i = 0; i < n; ++i) ASSERT_EQ(0, std::memcmp(&want[i], &got[i], 4)) << "element " << i;
      // The dispatching entry point gives the same.
      std::vector<float> active(static_cast<size_t>(n));
      DequantizeChunk(type, row.data(), active.data(), n);
      EXPECT_EQ(0, std::memcmp(want.data(), active.data(), want.size() * 4));
    }
  }
}

TEST(DequantizeChunk, TypesWithoutSimdFallBackToTheReference) {
  const int64_t n = 64;
  const std::vector<float> src = testing::RandomWeights(static_cast<size_t>(n), 23);
  std::vector<uint8_t> row(RowBytes(GgmlType::Q5_0, n));
  ASSERT_TRUE(QuantizeRow(GgmlType::Q5_0, src.data(), row.data(), n).ok());
  std::vector<float> want(n), got(n, -1.0f);
  DequantizeChunkScalar(GgmlType::Q5_0, row.data(), want.data(), n);
  if (HostSupports(IsaLevel::kAvx2)) {
    EXPECT_FALSE(avx2::DequantizeChunk(GgmlType::Q5_0, row.data(), got.data(), n));
  }
  DequantizeChunk(GgmlType::Q5_0, row.data(), got.data(), n);
  EXPECT_EQ(0, std::memcmp(want.data(), got.data(), want.size() * 4));
}

}  // namespace
}  // namespace pg
