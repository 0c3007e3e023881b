#include "backend/cpu/fp16.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>
#include <vector>

#include "backend/cpu/test_util.h"

namespace pg {
namespace {

TEST(Fp16, EveryHalfRoundTripsThroughF32) {
  for (uint32_t h = 0; h < 65536; ++h) {
    const float f = F16ToF32(static_cast<uint16_t>(h));
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(F16ToF32(F32ToF16(f)))) << h;
      continue;
    }
    ASSERT_EQ(F32ToF16(f), h) << "h=" << h << " f=" << f;
  }
}

TEST(Fp16, KnownValues) {
  EXPECT_EQ(F32ToF16(1.0f), 0x3c00);
  EXPECT_EQ(F32ToF16(-2.0f), 0xc000);
  EXPECT_EQ(F32ToF16(65504.0f), 0x7bff);
  EXPECT_EQ(F32ToF16(65520.0f), 0x7c00);  // ties to even -> inf
  EXPECT_EQ(F32ToF16(1e10f), 0x7c00);
  EXPECT_EQ(F32ToF16(5.9604644775390625e-08f), 0x0001);   // smallest subnormal
  EXPECT_EQ(F32ToF16(2.98023223876953125e-08f), 0x0000);  // half of it: tie to even -> 0
  EXPECT_EQ(F32ToF16(2.9802326e-08f), 0x0001);            // just above the tie
  EXPECT_EQ(F16ToF32(0x3555), 0.333251953125f);
  EXPECT_EQ(F32ToBF16(1.0f), 0x3f80);
  EXPECT_EQ(BF16ToF32(0x4049), 3.140625f);
  EXPECT_TRUE(std::isnan(BF16ToF32(F32ToBF16(NAN))));
}

TEST(Fp16, RoundsToNearestEvenBetweenNeighbours) {
  // For each pair of adjacent positive finite halves, the midpoint rounds to
  // the even one and points just either side round to the nearer.
  for (uint32_t h = 0; h < 0x7bff; ++h) {
    const double a = F16ToF32(static_cast<uint16_t>(h)), b = F16ToF32(static_cast<uint16_t>(h + 1));
    const float mid = static_cast<float>((a + b) / 2);
    const uint16_t even = (h & 1) ? static_cast<uint16_t>(h + 1) : static_cast<uint16_t>(h);
    ASSERT_EQ(F32ToF16(mid), even) << h;
    ASSERT_EQ(F32ToF16(std::nextafter(mid, 0.0f)), h) << h;
    ASSERT_EQ(F32ToF16(std::nextafter(mid, 1e9f)), h + 1) << h;
  }
}

TEST(Bf16, RoundsToNearestEven) {
  std::mt19937 rng(7);
  for (int i = 0; i < 200000; ++i) {
    const uint32_t u = rng();
    const float f = BitsToF32(u);
    if (std::isnan(f)) continue;
    const uint16_t r = F32ToBF16(f);
    const double exact = f;
    const double got = BF16ToF32(r);
    // No other bf16 is strictly closer.
    const double lo = BF16ToF32(static_cast<uint16_t>(r - 1)), hi = BF16ToF32(static_cast<uint16_t>(r + 1));
    if (std::isinf(got) || std::isinf(lo) || std::isinf(hi) || std::isnan(lo) || std::isnan(hi)) continue;
    ASSERT_LE(std::fabs(got - exact), std::fabs(lo - exact)) << u;
    ASSERT_LE(std::fabs(got - exact), std::fabs(hi - exact)) << u;
  }
}

// Random bit patterns (NaNs, infinities, subnormals included), awkward lengths.
std::vector<float> AwkwardFloats(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) {
    switch (rng() % 4) {
      case 0: v[i] = BitsToF32(rng()); break;
      case 1: v[i] = BitsToF32(rng() & 0x807fffffu); break;  // f32 subnormal / zero
      case 2:
        v[i] = static_cast<float>(std::ldexp(static_cast<double>(rng() % 2048) - 1024, -(int)(rng() % 30)));
        break;
      default: v[i] = std::uniform_real_distribution<float>(-70000, 70000)(rng); break;
    }
  }
  return v;
}

TEST(Fp16, RowConvertersMatchScalarAtEveryLevel) {
  for (const CpuKernels* k : testing::HostKernelTables()) {
    for (size_t n : {0, 1, 7, 8, 9, 31, 100, 1027}) {
      const std::vector<float> src = AwkwardFloats(n, static_cast<uint32_t>(n) + 1);
      std::vector<uint16_t> h(n), b(n);
      k->f32_to_f16(src.data(), h.data(), static_cast<int64_t>(n));
      k->f32_to_bf16(src.data(), b.data(), static_cast<int64_t>(n));
      std::vector<float> hf(n), bf(n);
      k->f16_to_f32(h.data(), hf.data(), static_cast<int64_t>(n));
      k->bf16_to_f32(b.data(), bf.data(), static_cast<int64_t>(n));
      for (size_t i = 0; i < n; ++i) {
        ASSERT_EQ(h[i], F32ToF16(src[i])) << IsaName(k->level) << " i=" << i << " x=" << src[i];
        ASSERT_EQ(b[i], F32ToBF16(src[i])) << IsaName(k->level) << " i=" << i << " x=" << src[i];
        ASSERT_EQ(F32ToBits(hf[i]), F32ToBits(F16ToF32(h[i]))) << IsaName(k->level);
        ASSERT_EQ(F32ToBits(bf[i]), F32ToBits(BF16ToF32(b[i]))) << IsaName(k->level);
      }
    }
  }
}

}  // namespace
}  // namespace pg
