// MatMul on Q4_1, Q5_0, Q5_1, IQ4_NL, MXFP4, Q2_K, Q3_K and IQ4_XS weights
// built from random bytes (every bit pattern a file may hold) with sane
// scales, at every kernel level, against a double-precision product of the
// dequantized weights and the activations the kernels see.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/fp16.h"
#include "backend/cpu/matmul.h"
#include "backend/cpu/quant.h"
#include "backend/cpu/test_util.h"

namespace pg {
namespace {

using testing::HostKernelTables;
using testing::RandomWeights;

const GgmlType kMoreTypes[] = {GgmlType::Q4_1,  GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::IQ4_NL,
                               GgmlType::MXFP4, GgmlType::Q2_K, GgmlType::Q3_K, GgmlType::IQ4_XS};

// Byte offsets of a block's f16 scale fields: {d, second f16 or -1}.
struct ScaleFields {
  int d, m;
};
ScaleFields FieldsOf(GgmlType t) {
  switch (t) {
    case GgmlType::Q4_1:
    case GgmlType::Q5_1: return {0, 2};
    case GgmlType::Q2_K: return {80, 82};
    case GgmlType::Q3_K: return {108, -1};
    default: return {0, -1};  // Q5_0, IQ4_NL, IQ4_XS; MXFP4 has a byte exponent at 0
  }
}

std::vector<uint8_t> RandomBlocks(GgmlType t, int64_t rows, int64_t cols, uint32_t seed) {
  const GgmlTypeInfo& info = InfoOf(t);
  const int64_t nblocks = rows * cols / info.block_elems;
  std::vector<uint8_t> data(static_cast<size_t>(nblocks) * info.block_bytes);
  std::mt19937 rng(seed);
  for (auto& b : data) b = static_cast<uint8_t>(rng());
  std::uniform_real_distribution<float> scale(0.001f, 0.02f);
  const ScaleFields f = FieldsOf(t);
  for (int64_t i = 0; i < nblocks; ++i) {
    uint8_t* blk = data.data() + i * info.block_bytes;
    if (t == GgmlType::MXFP4) {
      blk[0] = static_cast<uint8_t>(115 + rng() % 10);
      continue;
    }
    const uint16_t d = F32ToF16(scale(rng) * (t == GgmlType::IQ4_NL || t == GgmlType::IQ4_XS ? 0.05f : 1.0f));
    std::memcpy(blk + f.d, &d, 2);
    if (f.m >= 0) {
      const uint16_t m = F32ToF16(t == GgmlType::Q2_K ? scale(rng) : -scale(rng) * 8);
      std::memcpy(blk + f.m, &m, 2);
    }
  }
  return data;
}

// x quantized to the weight type's activation format and dequantized.
std::vector<float> EffectiveX(GgmlType t, const std::vector<float>& x, int64_t n_tokens, int64_t cols) {
  const bool k = ActFormatOf(WeightKindOf(t)) == ActFormat::kQ8_K;
  std::vector<float> out(x.size());
  std::vector<uint8_t> q(ActRowBytes(k ? ActFormat::kQ8_K : ActFormat::kQ8_0, cols));
  for (int64_t r = 0; r < n_tokens; ++r) {
    if (k) {
      ScalarKernels().quantize_q8_k(x.data() + r * cols, reinterpret_cast<BlockQ8_K*>(q.data()), cols);
    } else {
      ScalarKernels().quantize_q8_0(x.data() + r * cols, reinterpret_cast<BlockQ8_0*>(q.data()), cols);
    }
    EXPECT_TRUE(DequantizeRow(k ? GgmlType::Q8_K : GgmlType::Q8_0, q.data(), out.data() + r * cols, cols).ok());
  }
  return out;
}

TEST(MatMulMoreTypes, EveryLevelMatchesDoubleReference) {
  const int64_t rows = 13, cols = 512;
  const auto x = RandomWeights(64 * cols, 9, 1.0f);
  for (GgmlType t : kMoreTypes) {
    const auto wq = RandomBlocks(t, rows, cols, 30 + static_cast<uint32_t>(t));
    std::vector<float> wd(rows * cols);
    ASSERT_TRUE(DequantizeRow(t, wq.data(), wd.data(), rows * cols).ok()) << TypeName(t);
    const auto xe = EffectiveX(t, x, 64, cols);
    const WeightMatrix w = MakeWeightMatrix(t, wq.data(), rows, cols);
    ASSERT_TRUE(w.Validate().ok()) << TypeName(t);
    for (int threads : {1, 3}) {
      ThreadPool pool(threads);
      for (const CpuKernels* k : HostKernelTables()) {
        for (int64_t n_tokens : {1, 2, 5, 64}) {
          const std::vector<float> y = testing::MatMulTokens(*k, w, x, n_tokens, pool);
          for (int64_t tok = 0; tok < n_tokens; ++tok) {
            for (int64_t r = 0; r < rows; ++r) {
              const testing::Float64Dot d = testing::DotFloat64(wd.data() + r * cols, xe.data() + tok * cols, cols);
              ASSERT_NEAR(y[tok * rows + r], d.value, 3e-5 * d.magnitude + 1e-6)
                  << IsaName(k->level) << " " << TypeName(t) << " tokens=" << n_tokens << " t=" << tok << " r=" << r;
            }
          }
        }
      }
    }
  }
}

TEST(MatMulMoreTypes, MixedGroupMatchesSeparateCalls) {
  // A Qwen2.5-0.5B Q4_K_M-like attention group: Q5_0 shares Q8_0 activations
  // with Q8_0; Q4_K does not (one-at-a-time path).
  const int64_t cols = 256, n = 3;
  const GgmlType types[] = {GgmlType::Q5_0, GgmlType::Q8_0, GgmlType::Q4_1, GgmlType::Q4_K};
  std::vector<std::vector<uint8_t>> data;
  std::vector<WeightMatrix> ws;
  for (int i = 0; i < 4; ++i) {
    if (types[i] == GgmlType::Q8_0 || types[i] == GgmlType::Q4_K) {
      const auto wf = RandomWeights(16 * cols, 40 + i);
      data.emplace_back(RowBytes(types[i], cols) * 16);
      for (int r = 0; r < 16; ++r) {
        ASSERT_TRUE(
            QuantizeRow(types[i], wf.data() + r * cols, data.back().data() + r * RowBytes(types[i], cols), cols).ok());
      }
    } else {
      data.push_back(RandomBlocks(types[i], 16, cols, 50 + i));
    }
  }
  for (int i = 0; i < 4; ++i) ws.push_back(MakeWeightMatrix(types[i], data[i].data(), 16, cols));
  const auto x = RandomWeights(n * cols, 6, 1.0f);
  ThreadPool pool(2);
  MatMulScratch scratch;
  for (int count : {3, 4}) {
    std::vector<std::vector<float>> y(count, std::vector<float>(n * 16)), ref(count, std::vector<float>(n * 16));
    std::vector<MatMulOut> outs;
    for (int i = 0; i < count; ++i) {
      outs.push_back({&ws[i], y[i].data(), 16});
      MatMul(ws[i], x.data(), n, ref[i].data(), pool, scratch);
    }
    MatMulMany(outs.data(), count, x.data(), n, pool, scratch);
    for (int i = 0; i < count; ++i) EXPECT_EQ(y[i], ref[i]) << TypeName(types[i]);
  }
}

}  // namespace
}  // namespace pg
