// PackFp8E4M3: FP8 checkpoint tensors with 128x128-block, per-channel and
// per-tensor scales become FP8_E4M3 matrices whose weights are exactly
// fp8 * scale, and whose products are within the FP8 kernels' bound of the
// float64 product; bad tensors give one-line errors.
#include "backend/cpu/fp8_weights.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/matmul.h"
#include "backend/cpu/quant.h"
#include "backend/cpu/quant_fp.h"
#include "backend/cpu/test_util.h"

namespace pg {
namespace {

struct Checkpoint {
  std::vector<uint8_t> fp8;
  std::vector<float> scales;
};

Checkpoint RandomCheckpoint(Fp8ScaleKind kind, int64_t rows, int64_t cols, uint32_t seed) {
  Checkpoint c;
  std::mt19937 rng(seed);
  c.fp8.resize(static_cast<size_t>(rows * cols));
  for (auto& b : c.fp8) {
    b = static_cast<uint8_t>(rng());
    if ((b & 0x7F) == 0x7F) b = 0x00;
  }
  c.scales.resize(static_cast<size_t>(Fp8ScaleCount(kind, rows, cols)));
  for (auto& s : c.scales) s = std::ldexp(1.0f + static_cast<float>(rng() % 997) / 997.0f, -14);
  return c;
}

double Definition(Fp8ScaleKind kind, const Checkpoint& c, int64_t cols, int64_t r, int64_t i) {
  double s = c.scales[0];
  if (kind == Fp8ScaleKind::kPerChannel) s = c.scales[static_cast<size_t>(r)];
  if (kind == Fp8ScaleKind::kBlock128x128)
    s = c.scales[static_cast<size_t>((r / 128) * ((cols + 127) / 128) + i / 128)];
  return static_cast<double>(E4m3ToF32(c.fp8[static_cast<size_t>(r * cols + i)])) * s;
}

TEST(Fp8Weights, PackedWeightsAreFp8TimesScaleExactly) {
  const int64_t rows = 200, cols = 320;  // neither a multiple of 128: partial scale blocks
  for (Fp8ScaleKind kind : {Fp8ScaleKind::kBlock128x128, Fp8ScaleKind::kPerChannel, Fp8ScaleKind::kPerTensor}) {
    const Checkpoint c = RandomCheckpoint(kind, rows, cols, 1 + static_cast<uint32_t>(kind));
    std::vector<uint8_t> packed(Fp8PackedBytes(rows, cols));
    ASSERT_TRUE(PackFp8E4M3({c.fp8.data(), rows, cols, kind, c.scales.data(), static_cast<int64_t>(c.scales.size())},
                            packed.data())
                    .ok());
    const WeightMatrix w = MakeWeightMatrix(GgmlType::FP8_E4M3, packed.data(), rows, cols);
    ASSERT_TRUE(w.Validate().ok());
    std::vector<float> wd(static_cast<size_t>(rows * cols));
    ASSERT_TRUE(DequantizeRow(GgmlType::FP8_E4M3, packed.data(), wd.data(), rows * cols).ok());
    for (int64_t r = 0; r < rows; ++r)
      for (int64_t i = 0; i < cols; ++i)
        ASSERT_EQ(wd[r * cols + i], static_cast<float>(Definition(kind, c, cols, r, i))) << r << " " << i;

    // The product against the checkpoint's definition in float64.
    const int64_t n = 3;
    const auto x = testing::RandomWeights(n * cols, 2, 1.0f);
    std::vector<float> y(n * rows);
    ThreadPool pool(2);
    MatMulScratch scratch;
    MatMul(w, x.data(), n, y.data(), pool, scratch);
    for (int64_t t = 0; t < n; ++t) {
      for (int64_t r = 0; r < rows; ++r) {
        double ref = 0, mag = 0;
        for (int64_t i = 0; i < cols; ++i) {
          const double p = Definition(kind, c, cols, r, i) * x[t * cols + i];
          ref += p;
          mag += std::fabs(p);
        }
        ASSERT_LE(std::fabs(y[t * rows + r] - ref), (cols + 2) * std::ldexp(mag, -24)) << t << " " << r;
      }
    }
  }
}

TEST(Fp8Weights, BadTensorsGiveOneLineErrors) {
  const int64_t rows = 130, cols = 256;
  Checkpoint c = RandomCheckpoint(Fp8ScaleKind::kBlock128x128, rows, cols, 9);
  std::vector<uint8_t> packed(Fp8PackedBytes(rows, cols));
  Fp8Source s{c.fp8.data(), rows, cols, Fp8ScaleKind::kBlock128x128, c.scales.data(), 4};
  ASSERT_TRUE(PackFp8E4M3(s, packed.data()).ok());

  auto message = [&](Fp8Source bad) {
    const Status st = PackFp8E4M3(bad, packed.data());
    EXPECT_FALSE(st.ok());
    EXPECT_EQ(st.message().find('\n'), std::string::npos);
    return st.message();
  };
  Fp8Source wrong_count = s;
  wrong_count.n_scales = 2;
  EXPECT_EQ(message(wrong_count), "FP8 128x128-block scale has 2 values, expected 4 for a 130 x 256 weight");
  Fp8Source per_channel = s;
  per_channel.kind = Fp8ScaleKind::kPerChannel;
  EXPECT_EQ(message(per_channel), "FP8 per-channel scale has 4 values, expected 130 for a 130 x 256 weight");
  Fp8Source odd_cols = s;
  odd_cols.cols = 100;
  EXPECT_EQ(message(odd_cols), "FP8 weight has 100 columns, not a multiple of 64");
  c.scales[3] = -1.0f;
  EXPECT_NE(message(s).find("FP8 scale 3 is"), std::string::npos);
  c.scales[3] = NAN;
  EXPECT_NE(message(s).find("not a finite non-negative number"), std::string::npos);
  c.scales[3] = 1.0f;
  c.fp8[static_cast<size_t>(129 * cols + 70)] = 0xFF;
  EXPECT_EQ(message(s), "FP8 weight holds a NaN byte at row 129, column 70");
}

// QuantizeFp8Block128 then PackFp8E4M3 gives each weight back within half an
// E4M3 ulp of its block (|w| <= 448 * scale; 3 mantissa bits: relative 2^-4,
// or 2^-10 * scale absolute in the subnormal range), and a zero block zero.
TEST(Fp8Weights, Block128QuantizerRoundTripsWithinE4m3Rounding) {
  const int64_t rows = 130, cols = 192;
  std::mt19937 rng(5);
  std::normal_distribution<float> nd(0.0f, 0.02f);
  std::vector<float> w(static_cast<size_t>(rows * cols));
  for (float& v : w) v = nd(rng);
  for (int64_t r = 0; r < 128; ++r)
    for (int64_t c = 128; c < cols; ++c) w[static_cast<size_t>(r * cols + c)] = 0;  // block (0, 1) all zero
  std::vector<uint8_t> q(w.size());
  std::vector<float> scales(static_cast<size_t>(Fp8ScaleCount(Fp8ScaleKind::kBlock128x128, rows, cols)));
  QuantizeFp8Block128(w.data(), rows, cols, q.data(), scales.data());
  EXPECT_EQ(scales[1], 0.0f);
  std::vector<uint8_t> packed(Fp8PackedBytes(rows, cols));
  ASSERT_TRUE(PackFp8E4M3({q.data(), rows, cols, Fp8ScaleKind::kBlock128x128, scales.data(), 4}, packed.data()).ok());
  std::vector<float> back(w.size());
  ASSERT_TRUE(DequantizeRow(GgmlType::FP8_E4M3, packed.data(), back.data(), rows * cols).ok());
  for (int64_t r = 0; r < rows; ++r)
    for (int64_t c = 0; c < cols; ++c) {
      const size_t i = static_cast<size_t>(r * cols + c);
      const float scale = scales[static_cast<size_t>((r / 128) * 2 + c / 128)];
      const float bound = std::max(std::fabs(w[i]) / 16.0f, std::ldexp(scale, -10)) * 1.0001f;
      ASSERT_LE(std::fabs(back[i] - w[i]), bound) << r << "," << c;
    }
}

}  // namespace
}  // namespace pg
