// MatMul on NVFP4 and FP8_E4M3 weights at every kernel level: against the
// scalar reference and a float64 product of the exactly dequantized weights,
// within the documented bounds (docs/performance.md, "NVFP4 and FP8_E4M3"), over row ranges and
// as expert stacks (MatMulGrouped).
//
// Bounds, with u = 2^-24 and mag = sum_i |w_i x_i| over the row:
//   FP8_E4M3 (x in f32): |y - y64| <= (cols + 2) u mag, y64 the float64
//     product of E4m3(q) * d with x: one rounding of each dequantized weight
//     and product, and a sum of cols terms in any order.
//   NVFP4 (x quantized to Q8_0 as for the other 4-bit types): |y - y64| <=
//     (cols / 16 + 4) u mag, y64 the float64 product with the dequantized
//     Q8_0 x: integer sub-block sums are exact, the float sum has cols / 16 terms.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/fp16.h"
#include "backend/cpu/matmul.h"
#include "backend/cpu/quant.h"
#include "backend/cpu/quant_fp.h"
#include "backend/cpu/test_util.h"

namespace pg {
namespace {

using testing::HostKernelTables;
using testing::RandomWeights;

constexpr double kU = 1.0 / (1 << 24);

// Random bytes for every level and sign, scales in a sane range (no NaN codes).
std::vector<uint8_t> RandomFpBlocks(GgmlType t, int64_t rows, int64_t cols, uint32_t seed) {
  const int64_t nb = rows * cols / kQKNV;
  std::vector<uint8_t> data(static_cast<size_t>(nb) * InfoOf(t).block_bytes);
  std::mt19937 rng(seed);
  for (auto& b : data) b = static_cast<uint8_t>(rng());
  for (int64_t i = 0; i < nb; ++i) {
    if (t == GgmlType::NVFP4) {
      auto* b = reinterpret_cast<BlockNVFP4*>(data.data()) + i;
      for (auto& d : b->d) d = static_cast<uint8_t>(0x10 + rng() % 0x30);  // 2^-5 .. 2^1, some sub-blocks 0
      if (i % 7 == 0) b->d[1] = 0x7F;                                      // reads as 0
    } else {
      auto* b = reinterpret_cast<BlockFP8_E4M3*>(data.data()) + i;
      b->d = std::ldexp(1.0f + static_cast<float>(rng() % 1000) / 1000.0f, -12 + static_cast<int>(rng() % 6));
      for (auto& q : b->q)
        if ((q & 0x7F) == 0x7F) q = 0x3F;
    }
  }
  return data;
}

// x as the kernels of type t see it (Q8_0 round trip for NVFP4).
std::vector<float> SeenX(GgmlType t, const std::vector<float>& x, int64_t n, int64_t cols) {
  if (t != GgmlType::NVFP4) return x;
  std::vector<float> out(x.size());
  std::vector<BlockQ8_0> q(static_cast<size_t>(cols / kQK));
  for (int64_t r = 0; r < n; ++r) {
    ScalarKernels().quantize_q8_0(x.data() + r * cols, q.data(), cols);
    EXPECT_TRUE(DequantizeRow(GgmlType::Q8_0, q.data(), out.data() + r * cols, cols).ok());
  }
  return out;
}

double Bound(GgmlType t, int64_t cols, double mag) {
  return (t == GgmlType::NVFP4 ? static_cast<double>(cols / 16 + 4) : static_cast<double>(cols + 2)) * kU * mag;
}

TEST(MatMulFp, EveryLevelWithinBoundOfFloat64) {
  const int64_t rows = 19, cols = 640;
  const auto x = RandomWeights(40 * cols, 9, 1.0f);
  for (GgmlType t : {GgmlType::NVFP4, GgmlType::FP8_E4M3}) {
    const auto wq = RandomFpBlocks(t, rows, cols, 30);
    std::vector<float> wd(rows * cols);
    ASSERT_TRUE(DequantizeRow(t, wq.data(), wd.data(), rows * cols).ok());
    const auto xe = SeenX(t, x, 40, cols);
    const WeightMatrix w = MakeWeightMatrix(t, wq.data(), rows, cols);
    ASSERT_TRUE(w.Validate().ok());
    ThreadPool pool(2);
    for (const CpuKernels* k : HostKernelTables()) {
      for (int64_t n : {1, 2, 3, 5, 40}) {
        const std::vector<float> y = testing::MatMulTokens(*k, w, x, n, pool);
        for (int64_t tok = 0; tok < n; ++tok) {
          for (int64_t r = 0; r < rows; ++r) {
            const testing::Float64Dot d = testing::DotFloat64(wd.data() + r * cols, xe.data() + tok * cols, cols);
            ASSERT_LE(std::fabs(y[tok * rows + r] - d.value), Bound(t, cols, d.magnitude))
                << IsaName(k->level) << " " << TypeName(t) << " n=" << n << " t=" << tok << " r=" << r;
          }
        }
      }
    }
  }
}

TEST(MatMulFp, SimdTilesMatchScalarReferenceAndRowRanges) {
  const int64_t rows = 45, cols = 256, n = 7;
  const auto x = RandomWeights(n * cols, 4, 1.0f);
  for (GgmlType t : {GgmlType::NVFP4, GgmlType::FP8_E4M3}) {
    const auto wq = RandomFpBlocks(t, rows, cols, 8);
    const WeightMatrix w = MakeWeightMatrix(t, wq.data(), rows, cols);
    const int kind = static_cast<int>(WeightKindOf(w));
    // The activations every table's tiles read (Q8_0 quantizers are bit-identical across levels).
    std::vector<uint8_t> xa(ActRowBytes(ActFormatOf(WeightKindOf(w)), cols) * n);
    const size_t xs = xa.size() / n;
    for (int64_t tok = 0; tok < n; ++tok) {
      if (t == GgmlType::NVFP4) {
        ScalarKernels().quantize_q8_0(x.data() + tok * cols, reinterpret_cast<BlockQ8_0*>(xa.data() + tok * xs), cols);
      } else {
        std::memcpy(xa.data() + tok * xs, x.data() + tok * cols, xs);
      }
    }
    const auto xe = SeenX(t, x, n, cols);
    std::vector<float> ref(n * rows);
    ScalarKernels().gemm[kind](w, xa.data(), xs, 0, n, 0, rows, ref.data(), rows);
    for (const CpuKernels* k : HostKernelTables()) {
      SCOPED_TRACE(std::string(IsaName(k->level)) + " " + TypeName(t));
      std::vector<float> got(n * rows);
      k->gemm[kind](w, xa.data(), xs, 0, n, 0, rows, got.data(), rows);
      for (int64_t i = 0; i < n * rows; ++i) {
        double mag = 0;
        const int64_t tok = i / rows, r = i % rows;
        std::vector<float> wd(cols);
        ASSERT_TRUE(DequantizeRow(t, wq.data() + r * w.row_bytes, wd.data(), cols).ok());
        for (int64_t c = 0; c < cols; ++c) mag += std::fabs(static_cast<double>(wd[c]) * xe[tok * cols + c]);
        // Two sums of the same terms in different orders: each within the bound of the exact one.
        EXPECT_LE(std::fabs(got[i] - ref[i]), 2 * Bound(t, cols, mag)) << i;
      }
      testing::ExpectGemmBitsInRanges(k->gemm[kind], w, xa.data(), xs, n, rows, got);
    }
  }
}

// A MoE layer's expert stack: MatMulGrouped over the packed experts gives
// each expert's MatMul bits.
TEST(MatMulFp, ExpertStackGroupedMatchesPerExpertMatMul) {
  const int64_t experts = 4, rows = 24, cols = 192, n_rows = 9;
  const auto x = RandomWeights(n_rows * cols, 12, 1.0f);
  for (GgmlType t : {GgmlType::NVFP4, GgmlType::FP8_E4M3}) {
    const auto stack = RandomFpBlocks(t, experts * rows, cols, 13);
    const size_t expert_bytes = RowBytes(t, cols) * rows;
    std::vector<WeightMatrix> ws;
    for (int64_t e = 0; e < experts; ++e)
      ws.push_back(MakeWeightMatrix(t, stack.data() + e * expert_bytes, rows, cols));
    // Tokens 0-2 to expert 2, 3-7 to expert 0, 8 to expert 3; expert 1 none.
    const int64_t ranges[][3] = {{2, 0, 3}, {0, 3, 8}, {3, 8, 9}, {1, 9, 9}};
    std::vector<float> y(n_rows * rows, NAN);
    std::vector<MatMulGroup> groups;
    for (const auto& g : ranges) groups.push_back({&ws[g[0]], g[1], g[2], y.data(), rows});
    ThreadPool pool(2);
    MatMulScratch scratch;
    for (const CpuKernels* k : HostKernelTables()) {
      MatMulGroupedWith(*k, groups.data(), static_cast<int64_t>(groups.size()), x.data(), cols, n_rows, pool, scratch);
      for (const auto& g : ranges) {
        if (g[1] == g[2]) continue;
        std::vector<float> want((g[2] - g[1]) * rows);
        MatMulWith(*k, ws[g[0]], x.data() + g[1] * cols, cols, g[2] - g[1], want.data(), rows, pool, scratch);
        for (size_t i = 0; i < want.size(); ++i)
          EXPECT_EQ(y[g[1] * rows + i], want[i]) << IsaName(k->level) << " " << TypeName(t) << " expert " << g[0];
      }
    }
  }
}

}  // namespace
}  // namespace pg
