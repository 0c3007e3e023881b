#include "backend/cpu/matmul_precise.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "backend/cpu/quant.h"
#include "backend/cpu/test_util.h"

namespace pg {
namespace {

using testing::RandomWeights;

const GgmlType kTypes[] = {GgmlType::F32,  GgmlType::F16,  GgmlType::BF16, GgmlType::Q8_0,
                           GgmlType::Q4_0, GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1,
                           GgmlType::Q4_K, GgmlType::Q5_K, GgmlType::Q6_K};

// A quantized matrix and the exact values its blocks hold.
struct Matrix {
  std::vector<uint8_t> bytes;
  std::vector<float> values;  // (rows, cols) dequantized
  WeightMatrix w;
};

Matrix MakeMatrix(GgmlType type, int64_t rows, int64_t cols, uint32_t seed) {
  Matrix m;
  const std::vector<float> src = RandomWeights(static_cast<size_t>(rows * cols), seed);
  const size_t rb = RowBytes(type, cols);
  m.bytes.resize(rb * static_cast<size_t>(rows));
  m.values.resize(src.size());
  for (int64_t r = 0; r < rows; ++r) {
    EXPECT_TRUE(QuantizeRow(type, &src[r * cols], &m.bytes[r * rb], cols).ok());
    EXPECT_TRUE(DequantizeRow(type, &m.bytes[r * rb], &m.values[r * cols], cols).ok());
  }
  m.w = MakeWeightMatrix(type, m.bytes.data(), rows, cols);
  return m;
}

// |y - exact| / sum_c |w x| over all outputs, exact in double on f32 x.
double RelError(const Matrix& m, const std::vector<float>& x, int64_t n_tokens, const std::vector<float>& y) {
  const int64_t R = m.w.rows, C = m.w.cols;
  double worst = 0;
  for (int64_t t = 0; t < n_tokens; ++t)
    for (int64_t r = 0; r < R; ++r) {
      double exact = 0, mag = 0;
      for (int64_t c = 0; c < C; ++c) {
        exact += static_cast<double>(m.values[r * C + c]) * x[t * C + c];
        mag += std::fabs(static_cast<double>(m.values[r * C + c]) * x[t * C + c]);
      }
      worst = std::max(worst, std::fabs(y[t * R + r] - exact) / mag);
    }
  return worst;
}

// Against exact arithmetic on the stored weights and f32 x: f32 rounding
// only, and far closer than MatMul, whose activations are rounded to 8 bits
// (or to f16) first. Cols 288 leaves a partial chunk after the first 256.
TEST(MatMulPrecise, MatchesExactArithmeticOnTheStoredWeights) {
  ThreadPool pool(2);
  MatMulScratch scratch;
  for (GgmlType type : kTypes) {
    SCOPED_TRACE(TypeName(type));
    const int64_t rows = 24, n_tokens = 5;
    const int64_t cols = InfoOf(type).block_elems == 256 ? 512 : 288;
    const Matrix m = MakeMatrix(type, rows, cols, 7);
    const std::vector<float> x = RandomWeights(static_cast<size_t>(n_tokens * cols), 11, 1.0f);
    std::vector<float> precise(static_cast<size_t>(n_tokens * rows)), quantized(precise.size());
    MatMulPrecise(m.w, x.data(), cols, n_tokens, precise.data(), rows, pool);
    MatMul(m.w, x.data(), n_tokens, quantized.data(), pool, scratch);
    const double err = RelError(m, x, n_tokens, precise);
    EXPECT_LT(err, 1e-6);
    if (type != GgmlType::F32) {
      EXPECT_LT(err * 20, RelError(m, x, n_tokens, quantized));
    }
  }
}

// A row's result is the same bits whatever the batch, the token tile, the
// stride, the thread count or the other outputs of MatMulPreciseMany.
TEST(MatMulPrecise, ResultsDoNotDependOnBatchThreadsOrGrouping) {
  const int64_t cols = 256, n_tokens = 37;  // more than one 32-token tile
  for (GgmlType type : {GgmlType::Q8_0, GgmlType::Q4_K, GgmlType::Q6_K, GgmlType::F16}) {
    SCOPED_TRACE(TypeName(type));
    const Matrix a = MakeMatrix(type, 40, cols, 3), b = MakeMatrix(type, 16, cols, 4);
    const std::vector<float> x = RandomWeights(static_cast<size_t>(n_tokens * cols), 5, 1.0f);
    ThreadPool one(1), three(3);
    std::vector<float> batch(static_cast<size_t>(n_tokens * 40));
    MatMulPrecise(a.w, x.data(), cols, n_tokens, batch.data(), 40, three);
    std::vector<float> ya(static_cast<size_t>(n_tokens * 40)), yb(static_cast<size_t>(n_tokens * 16));
    const MatMulOut outs[2] = {{&a.w, ya.data(), 40}, {&b.w, yb.data(), 16}};
    MatMulPreciseMany(outs, 2, x.data(), n_tokens, three);
    EXPECT_EQ(0, std::memcmp(batch.data(), ya.data(), batch.size() * sizeof(float)));
    for (int64_t t = 0; t < n_tokens; t += 9) {
      // One token alone, read with a wider stride, on one thread.
      std::vector<float> xt(cols + 8, 0.0f);
      std::copy(&x[t * cols], &x[t * cols] + cols, xt.begin());
      float single[40], single_b[16];
      MatMulPrecise(a.w, xt.data(), cols + 8, 1, single, 40, one);
      MatMulPrecise(b.w, xt.data(), cols + 8, 1, single_b, 16, one);
      EXPECT_EQ(0, std::memcmp(single, &batch[t * 40], sizeof single)) << "token " << t;
      EXPECT_EQ(0, std::memcmp(single_b, &yb[t * 16], sizeof single_b)) << "token " << t;
    }
  }
}

TEST(MatMulPrecise, TileWritesOnlyItsRange) {
  const Matrix m = MakeMatrix(GgmlType::Q8_0, 16, 64, 9);
  const std::vector<float> x = RandomWeights(3 * 64, 10, 1.0f);
  std::vector<float> y(3 * 16, -7.0f);
  MatMulPreciseTile(m.w, x.data(), 64, 1, 2, 4, 12, y.data(), 16);
  for (int64_t t = 0; t < 3; ++t)
    for (int64_t r = 0; r < 16; ++r) {
      const bool inside = t == 1 && r >= 4 && r < 12;
      EXPECT_EQ(inside, y[t * 16 + r] != -7.0f) << t << "," << r;
    }
}

}  // namespace
}  // namespace pg
