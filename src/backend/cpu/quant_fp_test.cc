// The NVFP4 and FP8_E4M3 formats: type table entries, the E4M3 / UE4M3
// scalars against their definitions in double precision, and the row
// quantizers / dequantizers.
#include "backend/cpu/quant_fp.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "backend/cpu/quant.h"
#include "backend/cpu/test_util.h"

namespace pg {
namespace {

// E4M3 by its definition, in double.
double E4m3Exact(int b) {
  const int e = (b >> 3) & 15, m = b & 7;
  const double mag = e == 0 ? std::ldexp(m, -9) : std::ldexp(1.0 + m / 8.0, e - 7);
  return (b & 0x80) ? -mag : mag;
}

TEST(QuantFp, TypeTable) {
  EXPECT_EQ(static_cast<uint32_t>(GgmlType::NVFP4), 40u);
  EXPECT_EQ(InfoOf(GgmlType::NVFP4).block_elems, 64u);
  EXPECT_EQ(InfoOf(GgmlType::NVFP4).block_bytes, 36u);  // 4.5 bits per weight
  EXPECT_STREQ(TypeName(GgmlType::NVFP4), "NVFP4");
  EXPECT_EQ(InfoOf(GgmlType::FP8_E4M3).block_elems, 64u);
  EXPECT_EQ(InfoOf(GgmlType::FP8_E4M3).block_bytes, 68u);
  EXPECT_STREQ(TypeName(GgmlType::FP8_E4M3), "FP8_E4M3");
  EXPECT_EQ(GgmlTypeInfoFor(41), nullptr);
  EXPECT_TRUE(IsSupportedWeightType(GgmlType::NVFP4));
  EXPECT_TRUE(IsSupportedWeightType(GgmlType::FP8_E4M3));
}

TEST(QuantFp, E4m3EveryByteMatchesDefinition) {
  for (int b = 0; b < 256; ++b) {
    if ((b & 0x7F) == 0x7F) {
      EXPECT_TRUE(std::isnan(E4m3ToF32(static_cast<uint8_t>(b)))) << b;
      continue;
    }
    EXPECT_EQ(static_cast<double>(E4m3ToF32(static_cast<uint8_t>(b))), E4m3Exact(b)) << b;
    EXPECT_EQ(F32ToE4m3(E4m3ToF32(static_cast<uint8_t>(b))), b == 0x80 ? 0x80 : b) << b;
  }
  EXPECT_EQ(E4m3ToF32(0x7E), 448.0f);
  EXPECT_EQ(E4m3ToF32(0x38), 1.0f);
  EXPECT_EQ(E4m3ToF32(0x01), std::ldexp(1.0f, -9));
  EXPECT_EQ(E4m3ToF32(0xFE), -448.0f);
}

TEST(QuantFp, F32ToE4m3RoundsToNearestEven) {
  EXPECT_EQ(F32ToE4m3(1.0625f), 0x38);  // halfway 1 and 1.125: even mantissa
  EXPECT_EQ(F32ToE4m3(1.1875f), 0x3A);  // halfway 1.125 and 1.25
  EXPECT_EQ(F32ToE4m3(1000.0f), 0x7E);
  EXPECT_EQ(F32ToE4m3(-1000.0f), 0xFE);
  EXPECT_EQ(F32ToE4m3(std::ldexp(1.0f, -11)), 0x00);  // a quarter of the smallest step
  EXPECT_EQ(F32ToE4m3(std::ldexp(1.5f, -9)), 0x02);   // halfway 1 and 2 steps: even
  // Any value: a nearest code (brute force over the finite codes).
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> e(-12, 9.5f);
  for (int i = 0; i < 20000; ++i) {
    const float v = std::ldexp(1.0f, 0) * std::exp2(e(rng)) * (i % 2 ? -1.0f : 1.0f);
    const uint8_t got = F32ToE4m3(v);
    double best = 1e30;
    for (int b = 0; b < 256; ++b) {
      if ((b & 0x7F) == 0x7F) continue;
      best = std::fmin(best, std::fabs(E4m3Exact(b) - v));
    }
    if (std::fabs(v) <= 448) {
      EXPECT_EQ(std::fabs(E4m3Exact(got) - v), best) << v;
    }
  }
}

TEST(QuantFp, Ue4m3AsGgmlReadsIt) {
  EXPECT_EQ(Ue4m3Scale(0x00), 0.0f);
  EXPECT_EQ(Ue4m3Scale(0x7F), 0.0f);
  EXPECT_EQ(Ue4m3Scale(0x38), 0.5f);    // 1.0, halved
  EXPECT_EQ(Ue4m3Scale(0x7E), 224.0f);  // 448, halved
  EXPECT_EQ(Ue4m3Scale(0xB8), 0.5f);    // bit 7 is not read
  EXPECT_EQ(Ue4m3Scale(0xFF), 240.0f);  // only 0x7F reads as 0
  for (int b = 0; b < 0x7F; ++b) EXPECT_EQ(static_cast<double>(Ue4m3Scale(static_cast<uint8_t>(b))), E4m3Exact(b) / 2);
  EXPECT_EQ(F32ToUe4m3(1.0f), 0x38);
  EXPECT_EQ(F32ToUe4m3(1.0625f), 0x39);  // halfway rounds up
  EXPECT_EQ(F32ToUe4m3(1000.0f), 0x7E);
  EXPECT_EQ(F32ToUe4m3(-1.0f), 0x00);
  EXPECT_EQ(F32ToUe4m3(std::ldexp(1.0f, -9)), 0x01);
  for (int b = 1; b < 0x78; ++b) EXPECT_EQ(F32ToUe4m3(static_cast<float>(E4m3Exact(b))), b) << b;
}

TEST(QuantFp, NVFP4DequantMatchesDefinitionExactly) {
  std::mt19937 rng(7);
  std::vector<BlockNVFP4> blocks(8);
  for (auto& b : blocks) {
    for (auto& d : b.d) d = static_cast<uint8_t>(rng());
    for (auto& q : b.qs) q = static_cast<uint8_t>(rng());
  }
  std::vector<float> y(blocks.size() * kQKNV);
  ASSERT_TRUE(DequantizeRow(GgmlType::NVFP4, blocks.data(), y.data(), static_cast<int64_t>(y.size())).ok());
  const double e2m1[8] = {0, 0.5, 1, 1.5, 2, 3, 4, 6};
  for (size_t b = 0; b < blocks.size(); ++b) {
    for (int i = 0; i < kQKNV; ++i) {
      const int s = i / 16, j = i % 16;
      const uint8_t byte = blocks[b].qs[8 * s + j % 8];
      const int nib = j < 8 ? byte & 15 : byte >> 4;
      const int sb = blocks[b].d[s];
      const double scale = sb == 0x7F ? 0.0 : std::fabs(E4m3Exact(sb & 0x7F));
      const double want = (nib & 8 ? -1 : 1) * e2m1[nib & 7] * scale;
      EXPECT_EQ(static_cast<double>(y[b * kQKNV + i]), want) << b << " " << i;
    }
  }
}

TEST(QuantFp, NVFP4QuantizeKeepsRepresentableValuesAndBoundsError) {
  // A sub-block whose values are a UE4M3 scale times E2M1 levels comes back exactly.
  std::vector<float> x(kQKNV);
  const float levels[16] = {0, 0.5f, 1, 1.5f, 2, 3, 4, 6, -0.5f, -1, -1.5f, -2, -3, -4, -6, 6};
  for (int i = 0; i < kQKNV; ++i) x[i] = levels[i % 16] * 0.25f * static_cast<float>(1 + i / 16);
  BlockNVFP4 b;
  ASSERT_TRUE(QuantizeRow(GgmlType::NVFP4, x.data(), &b, kQKNV).ok());
  std::vector<float> y(kQKNV);
  ASSERT_TRUE(DequantizeRow(GgmlType::NVFP4, &b, y.data(), kQKNV).ok());
  EXPECT_EQ(x, y);
  // Random weights: each element within half the largest level gap (2 x scale) of its sub-block.
  const auto w = testing::RandomWeights(64 * kQKNV, 11);
  std::vector<BlockNVFP4> q(64);
  std::vector<float> back(w.size());
  ASSERT_TRUE(QuantizeRow(GgmlType::NVFP4, w.data(), q.data(), static_cast<int64_t>(w.size())).ok());
  ASSERT_TRUE(DequantizeRow(GgmlType::NVFP4, q.data(), back.data(), static_cast<int64_t>(w.size())).ok());
  for (size_t i = 0; i < w.size(); ++i) {
    const float scale = Ue4m3Scale(q[i / kQKNV].d[(i % kQKNV) / 16]);
    EXPECT_LE(std::fabs(back[i] - w[i]), 2.0f * scale + 1e-6f) << i;
  }
}

TEST(QuantFp, FP8RoundTripAndExactDequant) {
  const auto w = testing::RandomWeights(32 * kQKNV, 5);
  std::vector<BlockFP8_E4M3> q(32);
  std::vector<float> back(w.size());
  ASSERT_TRUE(QuantizeRow(GgmlType::FP8_E4M3, w.data(), q.data(), static_cast<int64_t>(w.size())).ok());
  ASSERT_TRUE(DequantizeRow(GgmlType::FP8_E4M3, q.data(), back.data(), static_cast<int64_t>(w.size())).ok());
  for (size_t i = 0; i < w.size(); ++i) {
    const BlockFP8_E4M3& b = q[i / kQKNV];
    // Dequant is the f32 rounding of the exact product.
    EXPECT_EQ(back[i], static_cast<float>(E4m3Exact(b.q[i % kQKNV]) * static_cast<double>(b.d)));
    // E4M3 keeps 3 mantissa bits: relative error <= 2^-4 (normals), absolute 2^-10 * d below.
    EXPECT_LE(std::fabs(back[i] - w[i]), std::fmax(std::fabs(w[i]) / 16, std::ldexp(b.d, -10)) * 1.0001f) << i;
  }
  const std::vector<float> zeros(kQKNV, 0.0f);
  ASSERT_TRUE(QuantizeRow(GgmlType::FP8_E4M3, zeros.data(), q.data(), kQKNV).ok());
  EXPECT_EQ(q[0].d, 0.0f);
  EXPECT_EQ(q[0].q[5], 0);
  EXPECT_FALSE(QuantizeRow(GgmlType::FP8_E4M3, zeros.data(), q.data(), 32).ok());  // not a multiple of 64
}

}  // namespace
}  // namespace pg
