// Batch invariance: a token's MatMul output must be bit-identical whether it
// is multiplied alone (decode) or inside a batch of any size (prefill chunk),
// and whatever the thread count. The prefix cache relies on it: a cache hit
// must reproduce exactly what recomputation would give.
#include <gtest/gtest.h>

#include <cstring>
#include <iterator>
#include <random>
#include <string>
#include <vector>

#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/matmul.h"
#include "backend/cpu/quant.h"
#include "backend/cpu/repack.h"

namespace pg {
namespace {

// Over `rows` rows (203: 26 8-row groups; 40: 5, an odd number, so the
// AVX-512 tiles of two groups end on one group alone).
void CheckInvariance(int64_t rows) {
  const int64_t cols = 512;
  std::mt19937 rng(3);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  std::vector<float> wf(static_cast<size_t>(rows * cols));
  for (auto& v : wf) v = nd(rng);
  const int64_t n_tok = 37;
  std::vector<float> x(static_cast<size_t>(n_tok * cols));
  for (auto& v : x) v = nd(rng) * 3.0f;
  // The last seven entries are repacked (Q8_0x8, F16 and BF16 Half4, Q4_Kx8, Q5_0 as Q8_0x8, Q6_Kx8, Q5_Kx8).
  const GgmlType types[] = {GgmlType::F32,  GgmlType::F16,   GgmlType::BF16,     GgmlType::Q8_0, GgmlType::Q4_0,
                            GgmlType::Q4_1, GgmlType::Q5_0,  GgmlType::Q5_1,     GgmlType::Q4_K, GgmlType::Q5_K,
                            GgmlType::Q6_K, GgmlType::NVFP4, GgmlType::FP8_E4M3, GgmlType::Q8_0, GgmlType::F16,
                            GgmlType::BF16, GgmlType::Q4_K,  GgmlType::Q5_0,     GgmlType::Q6_K, GgmlType::Q5_K};
  for (size_t ti = 0; ti < std::size(types); ++ti) {
    const GgmlType type = types[ti];
    const bool repacked = ti + 7 >= std::size(types);
    SCOPED_TRACE(std::string(TypeName(type)) + (repacked ? " repacked" : ""));
    std::vector<uint8_t> wq(RowBytes(type, cols) * rows);
    for (int64_t r = 0; r < rows; ++r)
      ASSERT_TRUE(QuantizeRow(type, wf.data() + r * cols, wq.data() + r * RowBytes(type, cols), cols).ok());
    RepackedWeights store;
    WeightMatrix w = MakeWeightMatrix(type, wq.data(), rows, cols);
    if (repacked) w = store.Add(w, Avx2Kernels());  // the AVX2 table repacks all seven, whatever this host runs
    ASSERT_EQ(w.layout != WeightLayout::kRowMajor, repacked);
    MatMulScratch scratch;
    ThreadPool one(1), three(3);
    std::vector<float> batch(static_cast<size_t>(n_tok * rows)), single(static_cast<size_t>(rows));
    MatMul(w, x.data(), n_tok, batch.data(), three, scratch);
    for (int64_t t = 0; t < n_tok; ++t) {
      MatMul(w, x.data() + t * cols, 1, single.data(), one, scratch);
      ASSERT_EQ(0, std::memcmp(single.data(), batch.data() + t * rows, rows * sizeof(float))) << "token " << t;
    }
    // Batches of other sizes, offset so a token lands in a different tile position.
    for (int64_t n : {2, 5, 16}) {
      std::vector<float> part(static_cast<size_t>(n * rows));
      MatMul(w, x.data() + 1 * cols, n, part.data(), one, scratch);
      ASSERT_EQ(0, std::memcmp(part.data(), batch.data() + 1 * rows, n * rows * sizeof(float))) << "batch " << n;
    }
  }
}

TEST(MatMulInvariance, TokenResultsDoNotDependOnBatchSizeOrThreads) {
  for (int64_t rows : {203, 40}) {
    SCOPED_TRACE("rows " + std::to_string(rows));
    CheckInvariance(rows);
  }
}

}  // namespace
}  // namespace pg
