// The row-wise kernels (kernels/elementwise.h) against the CPU scalar
// references, by normalised error (gpu_test_util.h). Tolerances: 1e-12 for
// exact decodes (GetRows), 1e-10 for single-pass float arithmetic whose only
// difference is summation order or libm (RMSNorm, SiLU, RoPE).
#include "gpu/kernels/elementwise.h"

#include <gtest/gtest.h>

#include <vector>

#include "backend/cpu/fp16.h"
#include "backend/cpu/quant.h"
#include "backend/cpu/rope.h"
#include "backend/cpu/test_util.h"
#include "backend/cpu/vec_ops.h"
#include "gguf/ggml_type.h"
#include "gpu/gpu_test_util.h"

namespace pg::gpu {
namespace {

using namespace testing;  // NOLINT(build/namespaces): the GPU test helpers (gpu_test_util.h)

constexpr WType kTypes[] = {WType::kF16, WType::kBF16, WType::kQ8_0, WType::kQ4_K, WType::kQ6_K};

std::vector<uint8_t> Quantize(WType t, const std::vector<float>& x, int64_t rows, int64_t cols) {
  const GgmlType g = static_cast<GgmlType>(t);
  const size_t rb = static_cast<size_t>(WTypeRowBytes(t, cols));
  std::vector<uint8_t> q(rb * rows);
  for (int64_t r = 0; r < rows; ++r) EXPECT_TRUE(QuantizeRow(g, x.data() + r * cols, q.data() + r * rb, cols).ok());
  return q;
}

TEST(GpuElementwise, GetRowsDecodesEveryTypeAsDequantizeRow) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  const int64_t rows = 7, cols = 512;
  const auto w = RandomWeights(rows * cols, 11);
  const std::vector<int32_t> ids = {6, 0, 3, 3, 1};
  for (WType t : kTypes) {
    SCOPED_TRACE(static_cast<int>(t));
    const auto q = Quantize(t, w, rows, cols);
    const int64_t rb = WTypeRowBytes(t, cols);
    std::vector<float> ref(ids.size() * cols);
    for (size_t i = 0; i < ids.size(); ++i) {
      ASSERT_TRUE(DequantizeRow(static_cast<GgmlType>(t), q.data() + ids[i] * rb, ref.data() + i * cols, cols).ok());
    }
    DeviceArray<uint8_t> dq(q);
    DeviceArray<int32_t> did(ids);
    DeviceArray<float> out(ref.size());
    ForEachWarpSize([&] {
      PG_GPU_OK(GetRows(t, dq.get(), rb, cols, did.get(), static_cast<int64_t>(ids.size()), out.get(), nullptr));
      EXPECT_LE(Nmse(out.Download(), ref), 1e-12);
    });
  }
}

TEST(GpuElementwise, RmsNormResidualMatchesCpu) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  for (int64_t n : {64, 100, 4096}) {
    const int64_t rows = 3;
    const auto x = RandomFloats(rows * n, 1), res = RandomFloats(rows * n, 2), w = RandomFloats(n, 3);
    std::vector<float> h(rows * n), ref(rows * n), ref_plain(rows * n);
    for (int64_t i = 0; i < rows * n; ++i) h[i] = res[i] + x[i];
    for (int64_t r = 0; r < rows; ++r) {
      RmsNorm(h.data() + r * n, w.data(), ref.data() + r * n, n, 1e-5f);
      RmsNorm(x.data() + r * n, nullptr, ref_plain.data() + r * n, n, 1e-6f);
    }
    ForEachWarpSize([&] {
      DeviceArray<float> dx(x), dres(res), dw(w), dy(rows * n);
      PG_GPU_OK(RmsNormResidual(dx.get(), dres.get(), dw.get(), dy.get(), rows, n, 1e-5f, nullptr));
      EXPECT_LE(Nmse(dy.Download(), ref), 1e-10) << n;
      EXPECT_EQ(dres.Download(), h);
      // No residual, no weight, in place (the q/k norm's form).
      PG_GPU_OK(RmsNormResidual(dx.get(), nullptr, nullptr, dx.get(), rows, n, 1e-6f, nullptr));
      EXPECT_LE(Nmse(dx.Download(), ref_plain), 1e-10) << n;
    });
  }
}

TEST(GpuElementwise, AddBiasAndSiluMulMatchCpu) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  const int64_t rows = 5, n = 333;
  const auto x = RandomFloats(rows * n, 4), b = RandomFloats(n, 5), u = RandomFloats(rows * n, 6, -3, 3);
  std::vector<float> ref_b = x, ref_s(rows * n);
  for (int64_t r = 0; r < rows; ++r) AddInPlace(ref_b.data() + r * n, b.data(), n);
  pg::SiluMul(ref_b.data(), u.data(), ref_s.data(), rows * n);
  DeviceArray<float> dx(x), db(b), du(u), dout(rows * n);
  PG_GPU_OK(AddBias(dx.get(), db.get(), rows, n, nullptr));
  EXPECT_EQ(dx.Download(), ref_b);
  PG_GPU_OK(SiluMul(dx.get(), du.get(), dout.get(), rows * n, nullptr));
  EXPECT_LE(Nmse(dout.Download(), ref_s), 1e-12);
}

TEST(GpuElementwise, RopeNormNeoxAndPartialMatchCpu) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  struct Case {
    int64_t head_dim, n_rot;
    bool neox;
  };
  for (const Case c : {Case{64, 64, false}, Case{128, 128, true}, Case{128, 64, true}, Case{64, 32, false}}) {
    const int64_t n_tokens = 5, n_heads = 3;
    const std::vector<int32_t> pos = {0, 1, 17, 4095, 8191};
    std::vector<float> inv(c.n_rot / 2);
    RopeInvFreq(c.n_rot, 10000.0f, RopeScaling{}, nullptr, inv.data());
    const auto x = RandomFloats(n_tokens * n_heads * c.head_dim, 7);
    std::vector<float> ref = x, cs(c.n_rot / 2), sn(c.n_rot / 2);
    for (int64_t t = 0; t < n_tokens; ++t) {
      RopeCosSin(inv.data(), c.n_rot, pos[t], cs.data(), sn.data());
      float* v = ref.data() + t * n_heads * c.head_dim;
      if (c.neox) {
        RopeNeox(v, n_heads, c.head_dim, c.n_rot, cs.data(), sn.data());
      } else {
        RopeNorm(v, n_heads, c.head_dim, c.n_rot, cs.data(), sn.data());
      }
    }
    DeviceArray<float> dx(x), dinv(inv);
    DeviceArray<int32_t> dpos(pos);
    PG_GPU_OK(Rope(dx.get(), n_tokens, n_heads, c.head_dim, c.n_rot, dpos.get(), dinv.get(), c.neox, nullptr));
    const auto got = dx.Download();
    EXPECT_LE(Nmse(got, ref), 1e-12) << c.head_dim << " " << c.n_rot << " " << c.neox;
    // Elements past n_rot are untouched.
    for (int64_t i = c.n_rot; i < c.head_dim; ++i) EXPECT_EQ(got[i], x[i]);
  }
}

TEST(GpuElementwise, RejectsBadShapes) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  DeviceArray<float> d(64);
  EXPECT_EQ(Rope(d.get(), 1, 1, 64, 63, nullptr, nullptr, false, nullptr), gpuErrorInvalidValue);
  EXPECT_EQ(GetRows(WType::kQ4_K, d.get(), 144, 128, nullptr, 1, d.get(), nullptr), gpuErrorInvalidValue);
}

}  // namespace
}  // namespace pg::gpu
