// Private test helpers for the CPU backend tests.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/matmul.h"
#include "backend/cpu/quant.h"
#include "backend/cpu/repack.h"

namespace pg::testing {

// Every kernel table the host can run, scalar first.
inline std::vector<const CpuKernels*> HostKernelTables() {
  std::vector<const CpuKernels*> out;
  for (IsaLevel l : {IsaLevel::kScalar, IsaLevel::kAvx2, IsaLevel::kAvx512}) {
    if (const CpuKernels* k = KernelsFor(l)) out.push_back(k);
  }
  return out;
}

inline std::vector<float> RandomFloats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (auto& x : v) x = dist(rng);
  return v;
}

// Gaussian values with a few outliers, like real weights / activations.
inline std::vector<float> RandomWeights(size_t n, uint32_t seed, float sigma = 0.05f) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> dist(0.0f, sigma);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = dist(rng) * ((i % 97) == 0 ? 8.0f : 1.0f);
  return v;
}

// The float64 dot of a weight row with an activation row (both `cols`
// long) and the sum of the products' magnitudes, which error bounds scale by.
struct Float64Dot {
  double value = 0;
  double magnitude = 0;
};

inline Float64Dot DotFloat64(const float* w, const float* x, int64_t cols) {
  Float64Dot d;
  for (int64_t i = 0; i < cols; ++i) {
    const double p = static_cast<double>(w[i]) * x[i];
    d.value += p;
    d.magnitude += std::fabs(p);
  }
  return d;
}

// y = w x for n tokens of x (rows of w.cols floats) through one kernel
// table; y starts as NaN, so an element the kernel leaves unwritten fails.
inline std::vector<float> MatMulTokens(const CpuKernels& k, const WeightMatrix& w, const std::vector<float>& x,
                                       int64_t n, ThreadPool& pool) {
  std::vector<float> y(static_cast<size_t>(n * w.rows), NAN);
  MatMulScratch scratch;
  MatMulWith(k, w, x.data(), w.cols, n, y.data(), w.rows, pool, scratch);
  return y;
}

// A row-major quantized matrix of RandomWeights and the bytes it views.
struct QuantMatrix {
  std::vector<uint8_t> bytes;
  WeightMatrix w;
};

// rows x cols RandomWeights(seed) quantized to `type`. `w` views `bytes`, so
// a caller may edit blocks in place afterwards.
inline QuantMatrix QuantizeRandom(GgmlType type, int64_t rows, int64_t cols, uint32_t seed) {
  QuantMatrix m;
  const std::vector<float> wf = RandomWeights(static_cast<size_t>(rows * cols), seed);
  const size_t rb = RowBytes(type, cols);
  m.bytes.resize(rb * static_cast<size_t>(rows));
  for (int64_t r = 0; r < rows; ++r)
    EXPECT_TRUE(QuantizeRow(type, wf.data() + r * cols, m.bytes.data() + r * rb, cols).ok());
  m.w = MakeWeightMatrix(type, m.bytes.data(), rows, cols);
  return m;
}

// w added to `store` for the AVX2 table, which asks for `layout`, checked:
// the view has that layout and validates, and the scalar table keeps w
// row-major.
inline WeightMatrix RepackForAvx2(RepackedWeights& store, const WeightMatrix& w, WeightLayout layout) {
  const WeightMatrix v = store.Add(w, Avx2Kernels());
  EXPECT_EQ(v.layout, layout);
  EXPECT_TRUE(v.Validate().ok());
  EXPECT_EQ(store.Add(w, ScalarKernels()).layout, WeightLayout::kRowMajor);
  return v;
}

// For a view `v` of m repacked into 8-row groups of nb blocks each (Group
// per block, e.g. BlockQ8_0x8), calls check(group block, lane, source block)
// for every row of the padded groups and every block: the source is row r's
// block b in m (a Src), nullptr for the padding rows past m's rows.
template <typename Group, typename Src, typename Check>
void ForEachRepackedLane(const WeightMatrix& v, const QuantMatrix& m, int64_t nb, Check check) {
  const auto* g = static_cast<const Group*>(v.data);
  const int64_t rows = m.w.rows, padded = (rows + 7) / 8 * 8;
  for (int64_t r = 0; r < padded; ++r) {
    for (int64_t b = 0; b < nb; ++b) {
      const Src* src = r < rows ? reinterpret_cast<const Src*>(m.bytes.data() + r * m.w.row_bytes) + b : nullptr;
      SCOPED_TRACE("row " + std::to_string(r) + " block " + std::to_string(b));
      check(g[(r / 8) * nb + b], static_cast<int>(r % 8), src);
    }
  }
}

// Expects gemm over every row of tokens [0, n_tok) to give want's bits
// (want is (n_tok, rows)), and, when r0 < r1, gemm over rows [r0, r1) alone
// to write exactly those rows.
inline void ExpectGemmBits(GemmTileFn gemm, const WeightMatrix& w, const void* x, size_t xs, int64_t n_tok,
                           int64_t rows, const std::vector<float>& want, int64_t r0, int64_t r1) {
  std::vector<float> got(want.size(), -2.0f);
  gemm(w, x, xs, 0, n_tok, 0, rows, got.data(), rows);
  EXPECT_EQ(0, std::memcmp(got.data(), want.data(), want.size() * sizeof(float)));
  if (r0 >= r1) return;
  std::vector<float> part(want.size(), -3.0f);
  gemm(w, x, xs, 0, n_tok, r0, r1, part.data(), rows);
  for (int64_t t = 0; t < n_tok; ++t)
    for (int64_t r = 0; r < rows; ++r)
      EXPECT_EQ(part[t * rows + r], (r >= r0 && r < r1) ? want[t * rows + r] : -3.0f) << t << " " << r;
}

// ExpectGemmBits over all rows, then over row ranges that start and end
// inside groups and inside pairs of groups (the AVX-512 tiles take two 8-row
// groups at once): each range alone writes exactly its rows, want's bits.
inline void ExpectGemmBitsInRanges(GemmTileFn gemm, const WeightMatrix& w, const void* x, size_t xs, int64_t n_tok,
                                   int64_t rows, const std::vector<float>& want) {
  const int64_t ranges[][2] = {{8, rows - 1}, {3, rows}, {0, 20}, {5, 27}, {9, 23}, {16, rows}, {24, 40}, {0, 9}};
  for (const auto& r : ranges) {
    const int64_t r1 = std::min(r[1], rows);
    if (r[0] >= r1) continue;
    SCOPED_TRACE("rows [" + std::to_string(r[0]) + ", " + std::to_string(r1) + ")");
    ExpectGemmBits(gemm, w, x, xs, n_tok, rows, want, r[0], r1);
  }
}

}  // namespace pg::testing
