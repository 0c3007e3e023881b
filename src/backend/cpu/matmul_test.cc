#include "backend/cpu/matmul.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <vector>

#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/fp16.h"
#include "backend/cpu/quant.h"
#include "backend/cpu/repack.h"
#include "backend/cpu/test_util.h"

namespace pg {
namespace {

using testing::HostKernelTables;
using testing::RandomWeights;

const GgmlType kTypes[] = {GgmlType::F32,  GgmlType::F16,  GgmlType::BF16, GgmlType::Q8_0,
                           GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1,
                           GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K};

// The activations each weight type's kernels actually see: x itself for float
// weights, else x quantized to Q8_0 / Q8_K and dequantized. With those, the
// reference below differs from MatMul only by float summation order.
std::vector<float> EffectiveActivations(GgmlType type, const std::vector<float>& x, int64_t n_tokens, int64_t cols) {
  const ActFormat f = ActFormatOf(WeightKindOf(type));
  if (f == ActFormat::kF32) return x;
  std::vector<float> out(x.size());
  std::vector<uint8_t> q(ActRowBytes(f, cols));
  if (f == ActFormat::kF32AsF16 || f == ActFormat::kF32AsBF16) {
    for (size_t i = 0; i < x.size(); ++i) {
      out[i] = f == ActFormat::kF32AsF16 ? F16ToF32(F32ToF16(x[i])) : BF16ToF32(F32ToBF16(x[i]));
    }
    return out;
  }
  for (int64_t t = 0; t < n_tokens; ++t) {
    if (f == ActFormat::kQ8_0) {
      ScalarKernels().quantize_q8_0(x.data() + t * cols, reinterpret_cast<BlockQ8_0*>(q.data()), cols);
      EXPECT_TRUE(DequantizeRow(GgmlType::Q8_0, q.data(), out.data() + t * cols, cols).ok());
    } else {
      ScalarKernels().quantize_q8_k(x.data() + t * cols, reinterpret_cast<BlockQ8_K*>(q.data()), cols);
      EXPECT_TRUE(DequantizeRow(GgmlType::Q8_K, q.data(), out.data() + t * cols, cols).ok());
    }
  }
  return out;
}

struct Case {
  int64_t rows, cols;
};

void CheckMatMul(const CpuKernels& k, GgmlType type, Case c, int64_t n_tokens, ThreadPool& pool) {
  const bool kquant = InfoOf(type).block_elems == 256;
  const int64_t cols = c.cols;
  if (cols % InfoOf(type).block_elems != 0) return;
  const std::vector<float> wf = RandomWeights(c.rows * cols, 100 + static_cast<uint32_t>(type));
  std::vector<uint8_t> wq(RowBytes(type, cols) * c.rows);
  for (int64_t r = 0; r < c.rows; ++r) {
    ASSERT_TRUE(QuantizeRow(type, wf.data() + r * cols, wq.data() + r * RowBytes(type, cols), cols).ok());
  }
  std::vector<float> wd(c.rows * cols);
  for (int64_t r = 0; r < c.rows; ++r) {
    ASSERT_TRUE(DequantizeRow(type, wq.data() + r * RowBytes(type, cols), wd.data() + r * cols, cols).ok());
  }
  const std::vector<float> x = RandomWeights(n_tokens * cols, 7, 1.0f);
  const std::vector<float> xe = EffectiveActivations(type, x, n_tokens, cols);

  const WeightMatrix w = MakeWeightMatrix(type, wq.data(), c.rows, cols);
  ASSERT_TRUE(w.Validate().ok());
  std::vector<float> y(n_tokens * c.rows, NAN);
  MatMulScratch scratch;
  MatMulWith(k, w, x.data(), cols, n_tokens, y.data(), c.rows, pool, scratch);

  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t r = 0; r < c.rows; ++r) {
      double ref = 0, mag = 0;
      for (int64_t i = 0; i < cols; ++i) {
        ref += static_cast<double>(wd[r * cols + i]) * xe[t * cols + i];
        mag += std::fabs(static_cast<double>(wd[r * cols + i]) * xe[t * cols + i]);
      }
      // Float accumulation over `cols` products in a different order: the
      // error is a few ulps of the sum of magnitudes (bounded by ~cols * 2^-24).
      const double tol = 1e-5 * mag + 1e-6 + (kquant ? 1e-5 * mag : 0);
      ASSERT_NEAR(y[t * c.rows + r], ref, tol)
          << IsaName(k.level) << " " << TypeName(type) << " rows=" << c.rows << " cols=" << cols
          << " tokens=" << n_tokens << " t=" << t << " r=" << r << " threads=" << pool.size();
    }
  }
}

TEST(MatMul, EveryTypeEveryLevelMatchesDoubleReference) {
  const Case cases[] = {{37, 512}, {8, 768}, {5, 256}, {13, 96}, {11, 77}};
  for (int threads : {1, 3}) {
    ThreadPool pool(threads);
    for (const CpuKernels* k : HostKernelTables()) {
      for (GgmlType type : kTypes) {
        for (const Case& c : cases) {
          if (c.cols % 32 != 0 && InfoOf(type).block_elems != 1) continue;
          for (int64_t n_tokens : {1, 3, 17, 64}) {
            CheckMatMul(*k, type, c, n_tokens, pool);
            if (HasFatalFailure()) return;
          }
        }
      }
    }
  }
}

TEST(MatMul, QuantizedResultIsCloseToFloatMatMul) {
  // End to end against the unquantized product: Q8_0 keeps ~1% relative error.
  const int64_t rows = 64, cols = 512, n = 4;
  const auto wf = RandomWeights(rows * cols, 1);
  const auto x = RandomWeights(n * cols, 2, 1.0f);
  std::vector<uint8_t> wq(RowBytes(GgmlType::Q8_0, cols) * rows);
  for (int64_t r = 0; r < rows; ++r) {
    ASSERT_TRUE(
        QuantizeRow(GgmlType::Q8_0, wf.data() + r * cols, wq.data() + r * RowBytes(GgmlType::Q8_0, cols), cols).ok());
  }
  ThreadPool pool(2);
  MatMulScratch scratch;
  std::vector<float> y(n * rows);
  MatMul(MakeWeightMatrix(GgmlType::Q8_0, wq.data(), rows, cols), x.data(), n, y.data(), pool, scratch);
  double err = 0, ss = 0;
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t r = 0; r < rows; ++r) {
      double ref = 0;
      for (int64_t i = 0; i < cols; ++i) ref += static_cast<double>(wf[r * cols + i]) * x[t * cols + i];
      err += (y[t * rows + r] - ref) * (y[t * rows + r] - ref);
      ss += ref * ref;
    }
  }
  EXPECT_LT(std::sqrt(err / ss), 0.02);
}

TEST(MatMul, StridedOutputWritesOnlyItsSlice) {
  const int64_t rows = 16, cols = 64, n = 5, ldy = 40, ldx = 70;
  const auto wf = RandomWeights(rows * cols, 3);
  const auto x = RandomWeights(n * ldx, 4, 1.0f);
  ThreadPool pool(2);
  MatMulScratch scratch;
  std::vector<float> y(n * ldy, 123.0f), y2(n * rows);
  const WeightMatrix w = MakeWeightMatrix(GgmlType::F32, wf.data(), rows, cols);
  MatMulStrided(w, x.data(), ldx, n, y.data(), ldy, pool, scratch);
  std::vector<float> xd(n * cols);
  for (int64_t t = 0; t < n; ++t) std::copy(x.begin() + t * ldx, x.begin() + t * ldx + cols, xd.begin() + t * cols);
  MatMul(w, xd.data(), n, y2.data(), pool, scratch);
  for (int64_t t = 0; t < n; ++t) {
    for (int64_t r = 0; r < ldy; ++r) {
      if (r < rows) {
        EXPECT_EQ(y[t * ldy + r], y2[t * rows + r]);
      } else {
        EXPECT_EQ(y[t * ldy + r], 123.0f);
      }
    }
  }
}

TEST(MatMul, ManyMatchesSeparateCalls) {
  // Q/K/V-like group of mixed types (Q4_K + Q6_K share Q8_K activations;
  // Q8_0 does not and takes the one-at-a-time path).
  const int64_t cols = 512, n = 5;
  const GgmlType types[] = {GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::Q6_K, GgmlType::Q8_0};
  const int64_t rows[] = {40, 16, 16, 24};
  std::vector<std::vector<uint8_t>> data(4);
  std::vector<WeightMatrix> ws(4);
  for (int i = 0; i < 4; ++i) {
    const auto wf = RandomWeights(rows[i] * cols, 20 + i);
    const size_t rb = RowBytes(types[i], cols);
    data[i].resize(rb * rows[i]);
    for (int64_t r = 0; r < rows[i]; ++r) {
      ASSERT_TRUE(QuantizeRow(types[i], wf.data() + r * cols, data[i].data() + r * rb, cols).ok());
    }
    ws[i] = MakeWeightMatrix(types[i], data[i].data(), rows[i], cols);
  }
  const auto x = RandomWeights(n * cols, 5, 1.0f);
  for (int threads : {1, 3}) {
    ThreadPool pool(threads);
    MatMulScratch scratch;
    for (int count : {3, 4}) {
      std::vector<std::vector<float>> y(count), y_ref(count);
      std::vector<MatMulOut> outs;
      for (int i = 0; i < count; ++i) {
        y[i].assign(n * rows[i], NAN);
        y_ref[i].assign(n * rows[i], NAN);
        outs.push_back({&ws[i], y[i].data(), rows[i]});
        MatMul(ws[i], x.data(), n, y_ref[i].data(), pool, scratch);
      }
      MatMulMany(outs.data(), count, x.data(), n, pool, scratch);
      for (int i = 0; i < count; ++i) EXPECT_EQ(y[i], y_ref[i]) << i;
    }
  }
}

// Grouped products (MoE experts): each group's rows are exactly the bits of
// MatMul on that matrix and those rows, for every kernel table, row-major and
// repacked layouts, empty groups and groups longer than one token block.
TEST(MatMul, GroupedMatchesMatMulPerGroupBitForBit) {
  const int64_t cols = 512, rows = 24;
  const int64_t sizes[] = {3, 0, 1, 150, 9};  // rows of x per group
  constexpr int kGroups = 5;
  int64_t n_rows = 0;
  for (int64_t n : sizes) n_rows += n;
  const auto x = RandomWeights(n_rows * cols, 8, 1.0f);
  for (const CpuKernels* k : HostKernelTables()) {
    for (GgmlType type :
         {GgmlType::Q8_0, GgmlType::Q5_0, GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K, GgmlType::F16}) {
      const size_t rb = RowBytes(type, cols);
      std::vector<uint8_t> data(rb * rows * kGroups);
      const auto wf = RandomWeights(rows * kGroups * cols, 30);
      for (int64_t r = 0; r < rows * kGroups; ++r)
        ASSERT_TRUE(QuantizeRow(type, wf.data() + r * cols, data.data() + r * rb, cols).ok());
      RepackedWeights store;
      std::vector<WeightMatrix> ws(kGroups);
      std::vector<MatMulGroup> groups(kGroups);
      std::vector<float> y(n_rows * rows, NAN), want(n_rows * rows, NAN);
      for (int threads : {1, 3}) {
        ThreadPool pool(threads);
        MatMulScratch scratch;
        int64_t t0 = 0;
        for (int g = 0; g < kGroups; ++g) {
          ws[g] = store.Add(MakeWeightMatrix(type, data.data() + g * rows * rb, rows, cols), *k);
          groups[g] = {&ws[g], t0, t0 + sizes[g], y.data(), rows};
          if (sizes[g] > 0)
            MatMulWith(*k, ws[g], x.data() + t0 * cols, cols, sizes[g], want.data() + t0 * rows, rows, pool, scratch);
          t0 += sizes[g];
        }
        MatMulGroupedWith(*k, groups.data(), kGroups, x.data(), cols, n_rows, pool, scratch);
        EXPECT_EQ(0, std::memcmp(y.data(), want.data(), y.size() * sizeof(float)))
            << "table " << k << " type " << static_cast<int>(type) << " threads " << threads;
      }
    }
  }
}

// Rows prepared once per token and then gathered (MoE: one token's row per
// chosen expert) give MatMulGrouped's bits on the gathered float rows.
TEST(MatMul, GroupedOnGatheredPreparedRowsMatchesGroupedOnGatheredFloats) {
  const int64_t cols = 512, rows = 16, n_tok = 3;
  const int32_t row_token[] = {2, 0, 0, 1, 2, 1, 0};  // grouped row -> token
  const int64_t n_rows = 7, split = 3;                // group 0: rows [0, 3), group 1: [3, 7)
  const auto x = RandomWeights(n_tok * cols, 9, 1.0f);
  std::vector<float> xg(n_rows * cols);
  for (int64_t r = 0; r < n_rows; ++r) std::copy_n(x.data() + row_token[r] * cols, cols, xg.data() + r * cols);
  for (GgmlType type : {GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::F16, GgmlType::F32}) {
    const size_t rb = RowBytes(type, cols);
    std::vector<uint8_t> data(rb * rows * 2);
    const auto wf = RandomWeights(rows * 2 * cols, 31);
    for (int64_t r = 0; r < rows * 2; ++r)
      ASSERT_TRUE(QuantizeRow(type, wf.data() + r * cols, data.data() + r * rb, cols).ok());
    RepackedWeights store;
    const WeightMatrix ws[2] = {
        store.Add(MakeWeightMatrix(type, data.data(), rows, cols), ActiveKernels()),
        store.Add(MakeWeightMatrix(type, data.data() + rows * rb, rows, cols), ActiveKernels())};
    std::vector<float> want(n_rows * rows, NAN), got(n_rows * rows, NAN);
    const MatMulGroup gw[2] = {{&ws[0], 0, split, want.data(), rows}, {&ws[1], split, n_rows, want.data(), rows}};
    const MatMulGroup gg[2] = {{&ws[0], 0, split, got.data(), rows}, {&ws[1], split, n_rows, got.data(), rows}};
    for (int threads : {1, 2}) {
      ThreadPool pool(threads);
      MatMulScratch scratch;
      MatMulGrouped(gw, 2, xg.data(), cols, n_rows, pool, scratch);
      const PreparedRows p = PrepareRowsFor(ws[0], x.data(), cols, n_tok, pool, scratch);
      std::vector<uint8_t> gathered(p.stride * n_rows);
      for (int64_t r = 0; r < n_rows; ++r)
        std::memcpy(gathered.data() + r * p.stride, static_cast<const uint8_t*>(p.data) + row_token[r] * p.stride,
                    p.stride);
      MatMulGroupedPrepared(gg, 2, {gathered.data(), p.stride}, n_rows, pool, scratch);
      EXPECT_EQ(0, std::memcmp(got.data(), want.data(), got.size() * sizeof(float)))
          << "type " << static_cast<int>(type) << " threads " << threads;
    }
  }
  const WeightMatrix q8 = MakeWeightMatrix(GgmlType::Q8_0, x.data(), 1, cols);
  const WeightMatrix q4k = MakeWeightMatrix(GgmlType::Q4_K, x.data(), 1, cols);
  EXPECT_TRUE(SamePreparedRows(q4k, MakeWeightMatrix(GgmlType::Q6_K, x.data(), 1, cols)));
  EXPECT_FALSE(SamePreparedRows(q8, q4k));
}

TEST(MatMul, ValidateRejectsBadMatrices) {
  float buf[64] = {};
  EXPECT_EQ(MakeWeightMatrix(GgmlType::Q8_1, buf, 1, 256).Validate().code(), StatusCode::kUnimplemented);
  EXPECT_EQ(MakeWeightMatrix(GgmlType::Q8_0, buf, 1, 48).Validate().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(MakeWeightMatrix(GgmlType::F32, nullptr, 1, 4).Validate().code(), StatusCode::kInvalidArgument);
  WeightMatrix w = MakeWeightMatrix(GgmlType::F32, buf, 2, 8);
  EXPECT_TRUE(w.Validate().ok());
  w.row_bytes = 16;
  EXPECT_FALSE(w.Validate().ok());
}

TEST(MatMul, ScratchReserveAvoidsLaterGrowth) {
  MatMulScratch s;
  s.Reserve(4864, 512);
  const size_t cap = s.capacity();
  EXPECT_GE(cap, ActRowBytes(ActFormat::kQ8_K, 4864 / 256 * 256 + 256) * 512 - 292 * 512);
  void* p = s.Get(ActRowBytes(ActFormat::kQ8_0, 4864) * 512);
  EXPECT_EQ(s.capacity(), cap);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(p) % 64, 0u);
}

TEST(CpuFeatures, ActiveLevelIsSupported) {
  EXPECT_TRUE(HostSupports(ActiveIsa()));
  EXPECT_EQ(&ActiveKernels(), KernelsFor(ActiveIsa()));
  EXPECT_TRUE(HostSupports(IsaLevel::kScalar));
  if (!HostSupports(IsaLevel::kAvx512)) {
    EXPECT_EQ(KernelsFor(IsaLevel::kAvx512), nullptr);
  }
}

TEST(CpuFeatures, Avx512KernelsRunWhereSupported) {
  if (!HostSupports(IsaLevel::kAvx512)) GTEST_SKIP() << "host has no AVX-512 VNNI";
  // Covered by the all-levels tests above; this just makes the skip visible.
  EXPECT_EQ(KernelsFor(IsaLevel::kAvx512)->level, IsaLevel::kAvx512);
}

}  // namespace
}  // namespace pg
