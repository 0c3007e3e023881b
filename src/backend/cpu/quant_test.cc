#include "backend/cpu/quant.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <filesystem>
#include <vector>

#include "backend/cpu/test_util.h"
#include "gguf/gguf_file.h"

namespace pg {
namespace {

using testing::RandomWeights;

struct Bound {
  GgmlType type;
  double max_rel_rmse;  // RMS error / RMS value
};

// Bounds on N(0, sigma) data with outliers. Expected RMS errors: Q8_0 ~0.5%,
// Q6_K ~1.5%, Q5_K ~3%, Q4_K ~6%, Q4_0 ~10% (outliers stretch the grid).
const Bound kBounds[] = {
    {GgmlType::F32, 0.0},   {GgmlType::F16, 1e-3},  {GgmlType::BF16, 5e-3}, {GgmlType::Q8_0, 0.01},
    {GgmlType::Q6_K, 0.03}, {GgmlType::Q5_K, 0.05}, {GgmlType::Q4_K, 0.10}, {GgmlType::Q4_0, 0.15},
    {GgmlType::Q4_1, 0.15}, {GgmlType::Q5_0, 0.08}, {GgmlType::Q5_1, 0.08},
};

TEST(Quant, RoundTripErrorIsBounded) {
  const int64_t n = 4096;
  const std::vector<float> x = RandomWeights(n, 11);
  double ss = 0;
  for (float v : x) ss += static_cast<double>(v) * v;
  for (const Bound& b : kBounds) {
    std::vector<uint8_t> q(RowBytes(b.type, n));
    ASSERT_TRUE(QuantizeRow(b.type, x.data(), q.data(), n).ok()) << TypeName(b.type);
    std::vector<float> y(n);
    ASSERT_TRUE(DequantizeRow(b.type, q.data(), y.data(), n).ok()) << TypeName(b.type);
    double es = 0;
    for (int64_t i = 0; i < n; ++i) es += (static_cast<double>(x[i]) - y[i]) * (x[i] - y[i]);
    const double rel = std::sqrt(es / ss);
    EXPECT_LE(rel, b.max_rel_rmse) << TypeName(b.type);
    if (b.type == GgmlType::F32) {
      EXPECT_EQ(rel, 0.0);
    } else {
      EXPECT_GT(rel, 0.0) << TypeName(b.type);
    }
    RecordProperty(TypeName(b.type), std::to_string(rel));
  }
}

TEST(Quant, KQuantScaleSearchBeatsPlainMinMax) {
  // The least-squares search must do better than a Q4_0-style min/max grid at
  // similar bits: Q4_K at 4.5 bpw vs Q4_0 at 4.5 bpw on the same data.
  const int64_t n = 8192;
  const std::vector<float> x = RandomWeights(n, 12);
  auto err = [&](GgmlType t) {
    std::vector<uint8_t> q(RowBytes(t, n));
    EXPECT_TRUE(QuantizeRow(t, x.data(), q.data(), n).ok());
    std::vector<float> y(n);
    EXPECT_TRUE(DequantizeRow(t, q.data(), y.data(), n).ok());
    double e = 0;
    for (int64_t i = 0; i < n; ++i) e += (x[i] - y[i]) * (x[i] - y[i]);
    return e;
  };
  EXPECT_LT(err(GgmlType::Q4_K), err(GgmlType::Q4_0));
  EXPECT_LT(err(GgmlType::Q5_K), err(GgmlType::Q4_K) / 3);
  EXPECT_LT(err(GgmlType::Q6_K), err(GgmlType::Q5_K) / 2);
}

TEST(Quant, ZeroAndConstantRows) {
  const int64_t n = 512;
  for (const Bound& b : kBounds) {
    for (float c : {0.0f, 0.25f, -3.0f}) {
      std::vector<float> x(n, c);
      std::vector<uint8_t> q(RowBytes(b.type, n));
      ASSERT_TRUE(QuantizeRow(b.type, x.data(), q.data(), n).ok());
      std::vector<float> y(n);
      ASSERT_TRUE(DequantizeRow(b.type, q.data(), y.data(), n).ok());
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_TRUE(std::isfinite(y[i]));
        ASSERT_NEAR(y[i], c, std::fabs(c) * 0.02 + 1e-6) << TypeName(b.type) << " c=" << c;
      }
    }
  }
}

TEST(Quant, BadArgumentsAreErrors) {
  std::vector<float> x(100);
  std::vector<uint8_t> q(1000);
  EXPECT_EQ(QuantizeRow(GgmlType::Q8_0, x.data(), q.data(), 33).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(QuantizeRow(GgmlType::Q4_K, x.data(), q.data(), 64).code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(QuantizeRow(GgmlType::Q2_K, x.data(), q.data(), 256).code(), StatusCode::kUnimplemented);
  EXPECT_EQ(DequantizeRow(GgmlType::Q8_1, q.data(), x.data(), 32).code(), StatusCode::kUnimplemented);
  EXPECT_EQ(DequantizeRow(GgmlType::I8, q.data(), x.data(), 32).code(), StatusCode::kUnimplemented);
  EXPECT_EQ(QuantizeRow(static_cast<GgmlType>(99), x.data(), q.data(), 32).code(), StatusCode::kUnimplemented);
  EXPECT_FALSE(QuantizeRow(GgmlType::Q8_K, x.data(), q.data(), 256).ok());
}

TEST(Quant, ActivationQuantizersMatchScalar) {
  const int64_t n = 1024;
  const std::vector<float> x = RandomWeights(n, 13, 1.0f);
  const CpuKernels& ref = ScalarKernels();
  std::vector<BlockQ8_0> a(n / kQK), b(n / kQK);
  std::vector<BlockQ8_K> c(n / kQKK), d(n / kQKK);
  ref.quantize_q8_0(x.data(), a.data(), n);
  ref.quantize_q8_k(x.data(), c.data(), n);
  for (const CpuKernels* k : testing::HostKernelTables()) {
    k->quantize_q8_0(x.data(), b.data(), n);
    k->quantize_q8_k(x.data(), d.data(), n);
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(BlockQ8_0))) << IsaName(k->level);
    EXPECT_EQ(0, std::memcmp(c.data(), d.data(), c.size() * sizeof(BlockQ8_K))) << IsaName(k->level);
  }
  // Q8_K: bsums are the sums of 16 levels, and dequantization is close.
  std::vector<float> y(n);
  ASSERT_TRUE(DequantizeRow(GgmlType::Q8_K, c.data(), y.data(), n).ok());
  for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(y[i], x[i], std::fabs(c[i / kQKK].d) * 0.5001);
  for (const BlockQ8_K& blk : c) {
    for (int j = 0; j < 16; ++j) {
      int s = 0;
      for (int i = 0; i < 16; ++i) s += blk.qs[16 * j + i];
      ASSERT_EQ(s, blk.bsums[j]);
    }
  }
}

// Every table's Q8_K quantizer gives the scalar one's bytes on the awkward
// inputs too: an all-zero block, magnitude ties of either sign (the first
// one sets the scale), NaNs (skipped by the maximum, level 0), an infinity,
// values that round to +128 (clamped), and halfway products (to even).
TEST(Quant, Q8_KQuantizersMatchScalarOnEdgeCases) {
  const int64_t n = 8 * kQKK;
  std::vector<float> x = RandomWeights(n, 29, 1.0f);
  for (int i = 0; i < kQKK; ++i) x[i] = 0;                     // block 0: zeros
  x[kQKK + 7] = -3.0f, x[kQKK + 100] = 3.0f;                   // block 1: tie, negative first
  x[2 * kQKK + 5] = 2.5f, x[2 * kQKK + 9] = -2.5f;             // block 2: tie, positive first
  x[3 * kQKK + 1] = std::nanf(""), x[3 * kQKK + 200] = -4.0f;  // block 3: a NaN
  x[4 * kQKK + 3] = INFINITY;                                  // block 4: an infinity
  for (int i = 0; i < kQKK; ++i) x[5 * kQKK + i] = (i % 2 ? 1.0f : -1.0f) * (i % 5 + 1);       // block 5: +128s
  for (int i = 0; i < kQKK; ++i) x[6 * kQKK + i] = (static_cast<float>(i) - 127.5f) / 128.0f;  // block 6: halves
  x[6 * kQKK] = -1.0f;
  for (int i = 0; i < kQKK; ++i) x[7 * kQKK + i] = (i == 17) ? std::nanf("") : 0.0f;  // NaN and zeros
  std::vector<BlockQ8_K> want(n / kQKK), got(n / kQKK);
  ScalarKernels().quantize_q8_k(x.data(), want.data(), n);
  for (const CpuKernels* k : testing::HostKernelTables()) {
    k->quantize_q8_k(x.data(), got.data(), n);
    for (size_t b = 0; b < want.size(); ++b)
      EXPECT_EQ(0, std::memcmp(&want[b], &got[b], sizeof(BlockQ8_K))) << IsaName(k->level) << " block " << b;
  }
}

// The two fixture files hold one model quantized by llama-quantize two ways;
// their dequantized token embeddings must agree to within quantization noise.
TEST(Quant, DequantizeMatchesLlamaCppFiles) {
  const std::string dir = std::string(PROSGROW_SHARED_DIR) + "/fixtures/models/";
  const std::string f8 = dir + "small-llama-spm-q8_0.gguf", f4 = dir + "small-llama-spm-q4_k_m.gguf";
  if (!std::filesystem::exists(f8) || !std::filesystem::exists(f4)) GTEST_SKIP() << "needs ../shared/fixtures (absent)";
  auto g8 = GgufFile::Open(f8);
  auto g4 = GgufFile::Open(f4);
  ASSERT_TRUE(g8.ok()) << g8.status().ToString();
  ASSERT_TRUE(g4.ok()) << g4.status().ToString();
  int compared_types = 0;
  bool seen[32] = {};
  for (const GgufTensorInfo& t4 : (*g4)->tensors()) {
    const GgufTensorInfo* t8 = (*g8)->FindTensor(t4.name);
    ASSERT_NE(t8, nullptr) << t4.name;
    if (t8->type != GgmlType::Q8_0 || t4.dims.size() != 2) continue;
    if (t4.type != GgmlType::Q4_K && t4.type != GgmlType::Q6_K && t4.type != GgmlType::Q5_K) continue;
    if (seen[static_cast<int>(t4.type)] && t4.name != "token_embd.weight") continue;
    seen[static_cast<int>(t4.type)] = true;
    ++compared_types;
    const int64_t cols = t4.dims[0];
    const int64_t rows = std::min<int64_t>(t4.rows(), 64);
    const size_t rb4 = RowBytes(t4.type, cols), rb8 = RowBytes(t8->type, cols);
    std::vector<float> a(cols), b(cols);
    double sab = 0, saa = 0, sbb = 0;
    for (int64_t r = 0; r < rows; ++r) {
      ASSERT_TRUE(DequantizeRow(t4.type, t4.data + r * rb4, a.data(), cols).ok());
      ASSERT_TRUE(DequantizeRow(t8->type, t8->data + r * rb8, b.data(), cols).ok());
      for (int64_t i = 0; i < cols; ++i) {
        sab += static_cast<double>(a[i]) * b[i];
        saa += static_cast<double>(a[i]) * a[i];
        sbb += static_cast<double>(b[i]) * b[i];
      }
    }
    const double corr = sab / std::sqrt(saa * sbb);
    EXPECT_GT(corr, t4.type == GgmlType::Q4_K ? 0.99 : 0.995) << t4.name << " " << TypeName(t4.type);
    // Same scale (a wrong block layout shows up as a scale or sign error).
    EXPECT_NEAR(std::sqrt(saa / sbb), 1.0, 0.05) << t4.name;

    // Our quantizer's quality vs llama-quantize's: re-quantize the Q8_0 rows
    // (a close stand-in for the f16 source) to t4.type and compare errors.
    double err_theirs = 0, err_ours = 0;
    std::vector<uint8_t> q(rb4);
    std::vector<float> c(cols);
    for (int64_t r = 0; r < rows; ++r) {
      ASSERT_TRUE(DequantizeRow(t4.type, t4.data + r * rb4, a.data(), cols).ok());
      ASSERT_TRUE(DequantizeRow(t8->type, t8->data + r * rb8, b.data(), cols).ok());
      ASSERT_TRUE(QuantizeRow(t4.type, b.data(), q.data(), cols).ok());
      ASSERT_TRUE(DequantizeRow(t4.type, q.data(), c.data(), cols).ok());
      for (int64_t i = 0; i < cols; ++i) {
        err_theirs += (static_cast<double>(a[i]) - b[i]) * (a[i] - b[i]);
        err_ours += (static_cast<double>(c[i]) - b[i]) * (c[i] - b[i]);
      }
    }
    RecordProperty(t4.name + "_err_ratio", std::to_string(std::sqrt(err_ours / err_theirs)));
    EXPECT_LT(std::sqrt(err_ours / err_theirs), 1.15) << t4.name << " " << TypeName(t4.type);
  }
  EXPECT_TRUE(seen[static_cast<int>(GgmlType::Q4_K)]);
  EXPECT_TRUE(seen[static_cast<int>(GgmlType::Q6_K)]);
  EXPECT_GT(compared_types, 1);
}

}  // namespace
}  // namespace pg
