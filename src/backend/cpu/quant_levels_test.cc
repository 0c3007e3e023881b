// Dequantizers of Q4_1, Q5_0, Q5_1, IQ4_NL, MXFP4, Q2_K, Q3_K, IQ4_XS on
// hand-built blocks. Each expected value is worked out by hand from ggml's
// format definition (ggml-common.h block layouts, ggml-quants.c
// dequantize_row_*), written in the comment beside it.
#include "backend/cpu/quant_levels.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

namespace pg {
namespace {

constexpr uint16_t kF16Half = 0x3800;     // 0.5
constexpr uint16_t kF16Quarter = 0x3400;  // 0.25
constexpr uint16_t kF16One = 0x3C00;      // 1.0
constexpr uint16_t kF16Two = 0x4000;      // 2.0
constexpr uint16_t kF16MinusOne = 0xBC00;

template <typename Block>
std::vector<float> Dequant(GgmlType type, const Block& b) {
  std::vector<float> y(InfoOf(type).block_elems, NAN);
  EXPECT_TRUE(DequantizeRow(type, &b, y.data(), static_cast<int64_t>(y.size())).ok()) << TypeName(type);
  return y;
}

void SetQh(uint8_t* qh, uint32_t v) { std::memcpy(qh, &v, 4); }

TEST(QuantLevels, TypeTableMatchesGgml) {
  // GGUF type numbers and block sizes of ggml.h / ggml-common.h.
  EXPECT_EQ(InfoOf(GgmlType::Q4_1).block_bytes, 20u);
  EXPECT_EQ(InfoOf(GgmlType::Q5_0).block_bytes, 22u);
  EXPECT_EQ(InfoOf(GgmlType::Q5_1).block_bytes, 24u);
  EXPECT_EQ(InfoOf(GgmlType::Q2_K).block_bytes, 84u);
  EXPECT_EQ(InfoOf(GgmlType::Q3_K).block_bytes, 110u);
  EXPECT_EQ(static_cast<uint32_t>(GgmlType::IQ4_NL), 20u);
  EXPECT_EQ(static_cast<uint32_t>(GgmlType::IQ4_XS), 23u);
  EXPECT_EQ(static_cast<uint32_t>(GgmlType::MXFP4), 39u);
  EXPECT_EQ(InfoOf(GgmlType::IQ4_NL).block_bytes, 18u);
  EXPECT_EQ(InfoOf(GgmlType::IQ4_XS).block_bytes, 136u);
  EXPECT_EQ(InfoOf(GgmlType::MXFP4).block_bytes, 17u);
  EXPECT_EQ(InfoOf(GgmlType::MXFP4).block_elems, 32u);
  EXPECT_STREQ(TypeName(GgmlType::MXFP4), "MXFP4");
  for (GgmlType t : {GgmlType::Q4_1, GgmlType::Q5_0, GgmlType::Q5_1, GgmlType::IQ4_NL, GgmlType::MXFP4, GgmlType::Q2_K,
                     GgmlType::Q3_K, GgmlType::IQ4_XS}) {
    EXPECT_TRUE(IsSupportedWeightType(t)) << TypeName(t);
  }
}

TEST(QuantLevels, Q4_1) {
  BlockQ4_1 b{};
  b.d = kF16Half;
  b.m = kF16MinusOne;
  for (int i = 0; i < 16; ++i) b.qs[i] = static_cast<uint8_t>(i | ((15 - i) << 4));
  const auto y = Dequant(GgmlType::Q4_1, b);
  EXPECT_EQ(y[0], -1.0f);   // 0.5 * 0 - 1
  EXPECT_EQ(y[7], 2.5f);    // 0.5 * 7 - 1
  EXPECT_EQ(y[16], 6.5f);   // high nibble of qs[0] = 15: 0.5 * 15 - 1
  EXPECT_EQ(y[31], -1.0f);  // high nibble of qs[15] = 0
}

TEST(QuantLevels, Q5_0) {
  BlockQ5_0 b{};
  b.d = kF16Quarter;
  SetQh(b.qh, 0x80000001u);  // fifth bit of elements 0 and 31
  b.qs[0] = 0x2F;
  b.qs[15] = 0xE1;
  const auto y = Dequant(GgmlType::Q5_0, b);
  EXPECT_EQ(y[0], 3.75f);    // (15 | 16) - 16 = 15, * 0.25
  EXPECT_EQ(y[16], -3.5f);   // 2 - 16 = -14
  EXPECT_EQ(y[15], -3.75f);  // 1 - 16 = -15
  EXPECT_EQ(y[31], 3.5f);    // (14 | 16) - 16 = 14
  EXPECT_EQ(y[5], -4.0f);    // 0 - 16
}

TEST(QuantLevels, Q5_1) {
  BlockQ5_1 b{};
  b.d = kF16Half;
  b.m = kF16Two;
  SetQh(b.qh, 0x00010002u);  // elements 1 and 16
  b.qs[0] = 0x7A;
  b.qs[1] = 0x34;
  const auto y = Dequant(GgmlType::Q5_1, b);
  EXPECT_EQ(y[0], 7.0f);    // 10 * 0.5 + 2
  EXPECT_EQ(y[16], 13.5f);  // (7 | 16) = 23: 11.5 + 2
  EXPECT_EQ(y[1], 12.0f);   // (4 | 16) = 20: 10 + 2
  EXPECT_EQ(y[17], 3.5f);   // 3: 1.5 + 2
  EXPECT_EQ(y[2], 2.0f);    // 0: the min
}

TEST(QuantLevels, IQ4_NL) {
  BlockIQ4_NL b{};
  b.d = kF16Half;
  b.qs[0] = 0xF0;
  b.qs[3] = 0x87;
  const auto y = Dequant(GgmlType::IQ4_NL, b);
  EXPECT_EQ(y[0], -63.5f);  // table[0] = -127
  EXPECT_EQ(y[16], 56.5f);  // table[15] = 113
  EXPECT_EQ(y[3], -5.0f);   // table[7] = -10
  EXPECT_EQ(y[19], 0.5f);   // table[8] = 1
}

TEST(QuantLevels, MXFP4) {
  BlockMXFP4 b{};
  b.e = 128;  // E8M0 2^1; the table holds E2M1 values doubled, so x = 2^0 * table
  b.qs[0] = 0x97;
  b.qs[1] = 0x5F;
  auto y = Dequant(GgmlType::MXFP4, b);
  EXPECT_EQ(y[0], 12.0f);   // E2M1 0b0111 = 6.0, times 2
  EXPECT_EQ(y[16], -1.0f);  // 0b1001 = -0.5, times 2
  EXPECT_EQ(y[1], -12.0f);  // 0b1111 = -6.0
  EXPECT_EQ(y[17], 6.0f);   // 0b0101 = 3.0
  EXPECT_EQ(y[2], 0.0f);
  b.e = 127;  // 2^0: x = table / 2 = the E2M1 value
  EXPECT_EQ(Dequant(GgmlType::MXFP4, b)[17], 3.0f);
  b.e = 0;  // 2^-127 halved: 2^-128, a subnormal float
  EXPECT_EQ(Dequant(GgmlType::MXFP4, b)[17], 6.0f * std::ldexp(1.0f, -128));
  b.e = 254;
  EXPECT_EQ(Dequant(GgmlType::MXFP4, b)[0], 12.0f * std::ldexp(1.0f, 126));
}

TEST(QuantLevels, Q2_K) {
  BlockQ2_K b{};
  b.d = kF16One;
  b.dmin = kF16Half;
  for (int j = 0; j < 16; ++j) b.scales[j] = static_cast<uint8_t>(j | ((15 - j) << 4));  // sc = j, m = 15 - j
  b.qs[0] = 0x03;   // element 0: bits 0-1 of qs[0] = 3
  b.qs[5] = 0x08;   // element 32 + 5: bits 2-3 of qs[5] = 2 (sub-block 2)
  b.qs[52] = 0x40;  // element 128 + 96 + 20: bits 6-7 of qs[32 + 20] = 1 (sub-block 15)
  const auto y = Dequant(GgmlType::Q2_K, b);
  EXPECT_EQ(y[0], -7.5f);    // 1 * 0 * 3 - 0.5 * 15
  EXPECT_EQ(y[16], -7.0f);   // sub-block 1: 0 - 0.5 * 14
  EXPECT_EQ(y[37], -2.5f);   // 1 * 2 * 2 - 0.5 * 13
  EXPECT_EQ(y[244], 15.0f);  // 1 * 15 * 1 - 0.5 * 0
}

TEST(QuantLevels, Q3_K) {
  BlockQ3_K b{};
  b.d = kF16One;
  // Scales (6 bits, minus 32): j = 0 low nibble 5 (scales[0]), high bits 2
  // (scales[8] bits 0-1) -> 37 - 32 = 5; j = 9 low 3 (scales[1] high
  // nibble), high 1 (scales[9] bits 4-5) -> 19 - 32 = -13; j = 15 low 10
  // (scales[7] high nibble), high 3 (scales[11] bits 6-7) -> 58 - 32 = 26;
  // every other j is 0 - 32.
  b.scales[0] = 0x05;
  b.scales[1] = 0x30;
  b.scales[7] = 0xA0;
  b.scales[8] = 0x02;
  b.scales[9] = 0x10;
  b.scales[11] = 0xC0;
  b.qs[0] = 0x03;      // element 0: low bits 3
  b.hmask[0] = 0x01;   //   high bit set: q = 7
  b.qs[54] = 0x01;     // element 128 + 22 (sub-block 9): low bits 1, hmask[22] bit 4 clear: q = 1
  b.qs[63] = 0x80;     // element 255: bits 6-7 of qs[63] = 2
  b.hmask[31] = 0x80;  //   hmask[31] bit 7 set: q = 6
  const auto y = Dequant(GgmlType::Q3_K, b);
  EXPECT_EQ(y[0], 15.0f);    // 5 * (7 - 4)
  EXPECT_EQ(y[150], 39.0f);  // -13 * (1 - 4)
  EXPECT_EQ(y[255], 52.0f);  // 26 * (6 - 4)
  EXPECT_EQ(y[17], 128.0f);  // -32 * (0 - 4)
}

TEST(QuantLevels, IQ4_XS) {
  BlockIQ4_XS b{};
  b.d = kF16Half;
  // ls = low 4 bits (scales_l nibble j) | high 2 bits (scales_h bits 2j): j = 0:
  // 10 | 2 << 4 = 42 -> 10; j = 1: 3 | 1 << 4 = 19 -> -13; j = 7: 15 | 3 << 4 = 63 -> 31.
  b.scales_l[0] = 0x3A;
  b.scales_l[3] = 0xF0;
  b.scales_h = 0xC006;
  b.qs[0] = 0xF0;
  b.qs[16] = 0x08;
  b.qs[127] = 0x70;
  const auto y = Dequant(GgmlType::IQ4_XS, b);
  EXPECT_EQ(y[0], -635.0f);     // 0.5 * 10 * -127
  EXPECT_EQ(y[16], 565.0f);     // 0.5 * 10 * 113
  EXPECT_EQ(y[32], -6.5f);      // 0.5 * -13 * 1
  EXPECT_EQ(y[48], 825.5f);     // 0.5 * -13 * -127
  EXPECT_EQ(y[239], -1968.5f);  // 0.5 * 31 * -127 (sub-block 7, element 15)
  EXPECT_EQ(y[255], -155.0f);   // 0.5 * 31 * -10
}

TEST(QuantLevels, LegacyQuantizersRoundTripTheirGrid) {
  // Values on a Q4_1 / Q5_1 grid come back exactly; Q5_0 keeps its levels.
  std::vector<float> x(64);
  for (int i = 0; i < 64; ++i) x[i] = -1.0f + 0.5f * static_cast<float>(i % 16);  // min -1, step 0.5
  std::vector<uint8_t> q(RowBytes(GgmlType::Q4_1, 64));
  ASSERT_TRUE(QuantizeRow(GgmlType::Q4_1, x.data(), q.data(), 64).ok());
  std::vector<float> y(64);
  ASSERT_TRUE(DequantizeRow(GgmlType::Q4_1, q.data(), y.data(), 64).ok());
  EXPECT_EQ(y, x);
  for (int i = 0; i < 64; ++i) x[i] = 0.25f * static_cast<float>(i % 32);  // 32 levels from 0
  q.assign(RowBytes(GgmlType::Q5_1, 64), 0);
  ASSERT_TRUE(QuantizeRow(GgmlType::Q5_1, x.data(), q.data(), 64).ok());
  ASSERT_TRUE(DequantizeRow(GgmlType::Q5_1, q.data(), y.data(), 64).ok());
  EXPECT_EQ(y, x);
  for (int i = 0; i < 64; ++i) x[i] = 0.25f * static_cast<float>(i % 32 - 16);  // levels -16..15
  q.assign(RowBytes(GgmlType::Q5_0, 64), 0);
  ASSERT_TRUE(QuantizeRow(GgmlType::Q5_0, x.data(), q.data(), 64).ok());
  ASSERT_TRUE(DequantizeRow(GgmlType::Q5_0, q.data(), y.data(), 64).ok());
  EXPECT_EQ(y, x);
}

}  // namespace
}  // namespace pg
