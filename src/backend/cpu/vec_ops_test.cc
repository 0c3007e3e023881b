#include "backend/cpu/vec_ops.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "backend/cpu/test_util.h"

namespace pg {
namespace {

using testing::HostKernelTables;
using testing::RandomFloats;

const int64_t kSizes[] = {1, 3, 8, 15, 16, 17, 33, 64, 100, 896, 1023};

// Relative closeness for float kernels whose summation order differs from the
// scalar reference: n terms of magnitude <= 1 accumulate ~n * 2^-24 error.
void ExpectClose(float got, float want, float scale, const char* what) {
  EXPECT_NEAR(got, want, 1e-5f * scale + 1e-6f) << what;
}

TEST(VecOps, DotAndAxpyMatchScalar) {
  const CpuKernels& ref = ScalarKernels();
  for (const CpuKernels* k : HostKernelTables()) {
    for (int64_t n : kSizes) {
      auto a = RandomFloats(n, 1), b = RandomFloats(n, 2);
      std::vector<uint16_t> ah(n), ab(n);
      ref.f32_to_f16(a.data(), ah.data(), n);
      ref.f32_to_bf16(a.data(), ab.data(), n);
      const float scale = std::sqrt(static_cast<float>(n)) * 4;
      ExpectClose(k->dot_f32(a.data(), b.data(), n), ref.dot_f32(a.data(), b.data(), n), scale, "dot_f32");
      ExpectClose(k->dot_f16(ah.data(), b.data(), n), ref.dot_f16(ah.data(), b.data(), n), scale, "dot_f16");
      ExpectClose(k->dot_bf16(ab.data(), b.data(), n), ref.dot_bf16(ab.data(), b.data(), n), scale, "dot_bf16");
      // Axpy is element-wise: one rounding per element at every level (FMA may
      // skip the product rounding), so the results agree to 1 ulp-ish.
      for (int which = 0; which < 3; ++which) {
        std::vector<float> y1 = b, y2 = b;
        if (which == 0) {
          k->axpy_f32(0.7f, a.data(), y1.data(), n);
          ref.axpy_f32(0.7f, a.data(), y2.data(), n);
        } else if (which == 1) {
          k->axpy_f16(0.7f, ah.data(), y1.data(), n);
          ref.axpy_f16(0.7f, ah.data(), y2.data(), n);
        } else {
          k->axpy_bf16(0.7f, ab.data(), y1.data(), n);
          ref.axpy_bf16(0.7f, ab.data(), y2.data(), n);
        }
        for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(y1[i], y2[i], 3e-7f) << IsaName(k->level) << which;
      }
    }
  }
}

// The AVX-512 SiluMul gives the AVX2 one's bits (the same operations per
// lane, the same scalar tail), so a model's outputs do not depend on which
// of the two tables a host runs.
TEST(VecOps, Avx512SiluMulIsAvx2BitForBit) {
  const CpuKernels* avx2 = KernelsFor(IsaLevel::kAvx2);
  const CpuKernels* avx512 = KernelsFor(IsaLevel::kAvx512);
  if (!avx2 || !avx512) GTEST_SKIP() << "host lacks AVX-512";
  for (int64_t n : {1, 7, 8, 9, 15, 16, 17, 23, 24, 31, 192, 200, 1000}) {
    auto g = RandomFloats(n, 11, -100, 100), u = RandomFloats(n, 12, -4, 4);
    if (n > 3) g[1] = -INFINITY, g[2] = 89.0f, g[3] = -88.0f;  // the clamps
    std::vector<float> a(n), b(n);
    avx2->silu_mul(g.data(), u.data(), a.data(), n);
    avx512->silu_mul(g.data(), u.data(), b.data(), n);
    ASSERT_EQ(0, std::memcmp(a.data(), b.data(), sizeof(float) * n)) << n;
  }
}

TEST(VecOps, ElementwiseKernelsMatchScalar) {
  const CpuKernels& ref = ScalarKernels();
  for (const CpuKernels* k : HostKernelTables()) {
    for (int64_t n : kSizes) {
      auto x = RandomFloats(n, 3, -4, 4), w = RandomFloats(n, 4), g = RandomFloats(n, 5, -20, 20);
      std::vector<float> y1(n), y2(n);
      k->rms_norm(x.data(), w.data(), y1.data(), n, 1e-6f);
      ref.rms_norm(x.data(), w.data(), y2.data(), n, 1e-6f);
      for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(y1[i], y2[i], 1e-5f * std::fabs(y2[i]) + 1e-6f);
      k->rms_norm(x.data(), nullptr, y1.data(), n, 1e-6f);
      ref.rms_norm(x.data(), nullptr, y2.data(), n, 1e-6f);
      for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(y1[i], y2[i], 1e-5f * std::fabs(y2[i]) + 1e-6f);

      // silu uses a polynomial exp (rel. error ~2e-7) and a division.
      k->silu_mul(g.data(), x.data(), y1.data(), n);
      ref.silu_mul(g.data(), x.data(), y2.data(), n);
      for (int64_t i = 0; i < n; ++i) ASSERT_NEAR(y1[i], y2[i], 2e-6f * std::fabs(y2[i]) + 1e-7f) << g[i];

      y1 = g;
      y2 = g;
      if (n > 2) y1[1] = y2[1] = -INFINITY;  // a masked position
      k->softmax(y1.data(), n);
      ref.softmax(y2.data(), n);
      float sum = 0;
      for (int64_t i = 0; i < n; ++i) {
        ASSERT_NEAR(y1[i], y2[i], 2e-6f * y2[i] + 1e-9f);
        sum += y1[i];
      }
      EXPECT_NEAR(sum, 1.0f, 1e-5f);
      if (n > 2) {
        EXPECT_EQ(y1[1], 0.0f);
      }

      y1 = x;
      y2 = x;
      k->add(y1.data(), w.data(), n);
      ref.add(y2.data(), w.data(), n);
      EXPECT_EQ(y1, y2);
      k->scale(y1.data(), 0.3f, n);
      ref.scale(y2.data(), 0.3f, n);
      EXPECT_EQ(y1, y2);
    }
  }
}

TEST(VecOps, PublicEntryPointsWork) {
  std::vector<float> x = {1, 2, 3, 4};
  std::vector<float> y(4);
  RmsNorm(x.data(), nullptr, y.data(), 4, 0.0f);
  EXPECT_NEAR(y[3], 4 / std::sqrt(7.5f), 1e-6f);
  SoftmaxInPlace(x.data(), 4);
  EXPECT_NEAR(x[3], std::exp(4.0) / (std::exp(1.0) + std::exp(2.0) + std::exp(3.0) + std::exp(4.0)), 1e-6);
  float g[2] = {0.0f, 2.0f}, u[2] = {5, 1}, o[2];
  SiluMul(g, u, o, 2);
  EXPECT_EQ(o[0], 0.0f);
  EXPECT_NEAR(o[1], 2.0f / (1.0f + std::exp(-2.0f)), 1e-6f);
}

TEST(Rope, RotationsMatchScalarAndFormula) {
  const int64_t n_heads = 3, head_dim = 64;
  for (int64_t n_rot : {int64_t{64}, int64_t{32}, int64_t{10}}) {
    std::vector<float> inv(n_rot / 2), c(n_rot / 2), s(n_rot / 2);
    RopeInvFreq(n_rot, 10000.0f, RopeScaling{}, nullptr, inv.data());
    RopeCosSin(inv.data(), n_rot, 37, c.data(), s.data());
    const auto x = RandomFloats(n_heads * head_dim, 9);
    for (const CpuKernels* k : HostKernelTables()) {
      for (bool neox : {false, true}) {
        std::vector<float> y = x;
        (neox ? k->rope_neox : k->rope_norm)(y.data(), n_heads, head_dim, n_rot, c.data(), s.data());
        for (int64_t h = 0; h < n_heads; ++h) {
          const float* xv = x.data() + h * head_dim;
          const float* yv = y.data() + h * head_dim;
          for (int64_t i = 0; i < n_rot / 2; ++i) {
            const int64_t ia = neox ? i : 2 * i, ib = neox ? i + n_rot / 2 : 2 * i + 1;
            const double theta = 37.0 * std::pow(10000.0, -2.0 * i / n_rot);
            const double a = xv[ia] * std::cos(theta) - xv[ib] * std::sin(theta);
            const double b = xv[ia] * std::sin(theta) + xv[ib] * std::cos(theta);
            ASSERT_NEAR(yv[ia], a, 1e-5) << IsaName(k->level) << neox << i;
            ASSERT_NEAR(yv[ib], b, 1e-5) << IsaName(k->level) << neox << i;
          }
          for (int64_t i = n_rot; i < head_dim; ++i) ASSERT_EQ(yv[i], xv[i]);
        }
      }
    }
  }
}

TEST(Rope, Llama3ScalingFormula) {
  // Llama 3.1: factor 8, low 1, high 4, original context 8192, base 500000, head dim 128.
  RopeScaling s;
  s.kind = RopeScaling::Kind::kLlama3;
  s.factor = 8;
  s.low_freq_factor = 1;
  s.high_freq_factor = 4;
  s.original_context = 8192;
  std::vector<float> plain(64), scaled(64);
  RopeInvFreq(128, 500000.0f, RopeScaling{}, nullptr, plain.data());
  RopeInvFreq(128, 500000.0f, s, nullptr, scaled.data());
  const double kPi = 3.141592653589793;
  for (int i = 0; i < 64; ++i) {
    const double wavelen = 2 * kPi / plain[i];
    if (wavelen < 8192.0 / 4) {
      EXPECT_FLOAT_EQ(scaled[i], plain[i]) << i;  // high frequency: unchanged
    } else if (wavelen > 8192.0) {
      EXPECT_FLOAT_EQ(scaled[i], plain[i] / 8) << i;  // low frequency: divided by factor
    } else {
      EXPECT_LT(scaled[i], plain[i]);
      EXPECT_GT(scaled[i], plain[i] / 8);
    }
  }
  EXPECT_FLOAT_EQ(scaled[0], 1.0f);
  // The same through explicit freq factors (rope_freqs.weight) gives the same table.
  std::vector<float> factors(64), via(64);
  for (int i = 0; i < 64; ++i) factors[i] = plain[i] / scaled[i];
  RopeInvFreq(128, 500000.0f, s, factors.data(), via.data());
  for (int i = 0; i < 64; ++i) EXPECT_NEAR(via[i], scaled[i], 1e-6f * scaled[i]);
  // Linear scaling divides every frequency.
  RopeScaling lin;
  lin.kind = RopeScaling::Kind::kLinear;
  lin.factor = 4;
  RopeInvFreq(128, 500000.0f, lin, nullptr, via.data());
  for (int i = 0; i < 64; ++i) EXPECT_FLOAT_EQ(via[i], plain[i] / 4);
}

}  // namespace
}  // namespace pg
