// Device matrix products (kernels/matmul.h) against the CPU: MatMul against
// MatMulPrecise (f32 activations, every block decoded as DequantizeRow) for
// the six weight types; GemmBf16 against a double-precision product of the
// same bf16 operands. Tolerance: normalised error <= 1e-9 (f32 sums in
// another order; measured ~1e-13).
#include "gpu/kernels/matmul.h"

#include <gtest/gtest.h>

#include <vector>

#include "backend/cpu/fp16.h"
#include "backend/cpu/matmul.h"
#include "backend/cpu/matmul_precise.h"
#include "backend/cpu/quant.h"
#include "backend/cpu/test_util.h"
#include "backend/cpu/vec_ops.h"
#include "gpu/gpu_test_util.h"
#include "gpu/kernels/elementwise.h"
#include "gpu/kernels/moe.h"

namespace pg::gpu {
namespace {

using namespace testing;  // NOLINT(build/namespaces): the GPU test helpers (gpu_test_util.h)

constexpr double kTol = 1e-9;
constexpr WType kTypes[] = {WType::kF32, WType::kF16, WType::kBF16, WType::kQ8_0, WType::kQ4_K, WType::kQ6_K};

std::vector<uint8_t> Quantize(WType t, const std::vector<float>& x, int64_t rows, int64_t cols) {
  const size_t rb = static_cast<size_t>(WTypeRowBytes(t, cols));
  std::vector<uint8_t> q(rb * rows);
  for (int64_t r = 0; r < rows; ++r) {
    EXPECT_TRUE(QuantizeRow(static_cast<GgmlType>(t), x.data() + r * cols, q.data() + r * rb, cols).ok());
  }
  return q;
}

TEST(GpuMatMul, EveryTypeMatchesMatMulPrecise) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  ThreadPool pool(1);
  const int64_t rows = 37, cols = 512;  // 37: not a multiple of the rows per block
  for (WType t : kTypes) {
    const auto w = RandomWeights(rows * cols, 21);
    const auto q = Quantize(t, w, rows, cols);
    DeviceArray<uint8_t> dq(q);
    const DeviceMatrix dm{t, dq.get(), rows, cols, WTypeRowBytes(t, cols), 0};
    const WeightMatrix cm = MakeWeightMatrix(static_cast<GgmlType>(t), q.data(), rows, cols);
    for (int64_t n_tokens : {1, 3, 8, 13}) {  // batch 1, and not multiples of kMatMulTokens
      SCOPED_TRACE(::testing::Message() << "type " << static_cast<int>(t) << " tokens " << n_tokens);
      const auto x = RandomFloats(n_tokens * cols, 22);
      std::vector<float> ref(n_tokens * rows);
      MatMulPrecise(cm, x.data(), cols, n_tokens, ref.data(), rows, pool);
      DeviceArray<float> dx(x), dy(ref.size());
      ForEachWarpSize([&] {
        PG_GPU_OK(MatMul(dm, dx.get(), cols, n_tokens, dy.get(), rows, nullptr));
        EXPECT_LE(Nmse(dy.Download(), ref), kTol);
      });
    }
  }
}

TEST(GpuMatMul, StridedOutputWritesOnlyItsSlice) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  const int64_t rows = 10, cols = 256, n_tokens = 2, ldy = 25;
  const auto q = Quantize(WType::kQ8_0, RandomWeights(rows * cols, 3), rows, cols);
  DeviceArray<uint8_t> dq(q);
  DeviceArray<float> dx(RandomFloats(n_tokens * cols, 4));
  DeviceArray<float> dy(std::vector<float>(n_tokens * ldy, -7.0f));
  const DeviceMatrix dm{WType::kQ8_0, dq.get(), rows, cols, WTypeRowBytes(WType::kQ8_0, cols), 0};
  PG_GPU_OK(MatMul(dm, dx.get(), cols, n_tokens, dy.get(), ldy, nullptr));
  const auto y = dy.Download();
  for (int64_t t = 0; t < n_tokens; ++t) {
    for (int64_t r = rows; r < ldy; ++r) EXPECT_EQ(y[t * ldy + r], -7.0f);
  }
}

TEST(GpuMatMul, GemmBf16MatchesExactProductOfItsOperands) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  for (auto [m, n, k] : {std::tuple<int64_t, int64_t, int64_t>{70, 19, 100}, {32, 1, 256}, {129, 64, 48}}) {
    const auto wf = RandomFloats(m * k, 5), xf = RandomFloats(n * k, 6);
    std::vector<uint16_t> w(m * k), x(n * k);
    F32ToBF16Row(wf.data(), w.data(), m * k);
    F32ToBF16Row(xf.data(), x.data(), n * k);
    std::vector<float> ref(n * m);
    for (int64_t i = 0; i < n; ++i) {
      for (int64_t j = 0; j < m; ++j) {
        double acc = 0;
        for (int64_t c = 0; c < k; ++c) acc += double(BF16ToF32(x[i * k + c])) * BF16ToF32(w[j * k + c]);
        ref[i * m + j] = static_cast<float>(acc);
      }
    }
    DeviceArray<uint16_t> dw(w), dx(x);
    DeviceArray<float> dy(ref.size());
    PG_GPU_OK(GemmBf16(dw.get(), dx.get(), dy.get(), m, n, k, nullptr));
    EXPECT_LE(Nmse(dy.Download(), ref), kTol) << m << "x" << n << "x" << k;
  }
}

TEST(GpuMatMul, DequantToBf16AndRoundToBf16AreExact) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  const int64_t rows = 3, cols = 256;
  for (WType t : kTypes) {
    const auto q = Quantize(t, RandomWeights(rows * cols, 8), rows, cols);
    std::vector<float> deq(rows * cols);
    const int64_t rb = WTypeRowBytes(t, cols);
    for (int64_t r = 0; r < rows; ++r) {
      ASSERT_TRUE(DequantizeRow(static_cast<GgmlType>(t), q.data() + r * rb, deq.data() + r * cols, cols).ok());
    }
    std::vector<uint16_t> ref(rows * cols);
    F32ToBF16Row(deq.data(), ref.data(), rows * cols);
    DeviceArray<uint8_t> dq(q);
    DeviceArray<uint16_t> out(ref.size());
    PG_GPU_OK(DequantToBf16(DeviceMatrix{t, dq.get(), rows, cols, rb, 0}, out.get(), nullptr));
    EXPECT_EQ(out.Download(), ref) << static_cast<int>(t);
    DeviceArray<float> df(deq);
    PG_GPU_OK(RoundToBf16(df.get(), out.get(), rows * cols, nullptr));
    EXPECT_EQ(out.Download(), ref);
  }
}

// The last step of the forward pass: only the rows that need logits are
// gathered, normed and projected (here rows 4 and 1 of 5), Q6_K output matrix.
TEST(GpuMatMul, FinalNormAndOutputProjectionOnLogitRowsOnly) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  ThreadPool pool(1);
  const int64_t T = 5, D = 256, V = 300;
  const std::vector<int32_t> logit_rows = {4, 1};
  const auto h = RandomFloats(T * D, 30), norm_w = RandomFloats(D, 31, 0.5f, 1.5f);
  const auto q = Quantize(WType::kQ6_K, RandomWeights(V * D, 32), V, D);
  std::vector<float> normed(logit_rows.size() * D), ref(logit_rows.size() * V);
  for (size_t i = 0; i < logit_rows.size(); ++i) {
    RmsNorm(h.data() + logit_rows[i] * D, norm_w.data(), normed.data() + i * D, D, 1e-6f);
  }
  MatMulPrecise(MakeWeightMatrix(GgmlType::Q6_K, q.data(), V, D), normed.data(), D,
                static_cast<int64_t>(logit_rows.size()), ref.data(), V, pool);
  DeviceArray<float> dh(h), dw(norm_w), rows(logit_rows.size() * D), logits(ref.size());
  DeviceArray<int32_t> dsel(logit_rows);
  DeviceArray<uint8_t> dq(q);
  const int64_t n = static_cast<int64_t>(logit_rows.size());
  PG_GPU_OK(GatherRows(dh.get(), dsel.get(), n, D, rows.get(), nullptr));
  PG_GPU_OK(RmsNormResidual(rows.get(), nullptr, dw.get(), rows.get(), n, D, 1e-6f, nullptr));
  PG_GPU_OK(MatMul(DeviceMatrix{WType::kQ6_K, dq.get(), V, D, WTypeRowBytes(WType::kQ6_K, D), 0}, rows.get(), D, n,
                   logits.get(), V, nullptr));
  EXPECT_LE(Nmse(logits.Download(), ref), kTol);
}

}  // namespace
}  // namespace pg::gpu
