#include "backend/cpu/repack.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "backend/cpu/cpu_kernels.h"
#include "backend/cpu/fp16.h"
#include "backend/cpu/test_util.h"

namespace pg {
namespace {

using testing::ExpectGemmBits;
using testing::ExpectGemmBitsInRanges;
using testing::HostKernelTables;
using testing::RandomWeights;
using Q8Matrix = testing::QuantMatrix;

Q8Matrix MakeQ8(int64_t rows, int64_t cols, uint32_t seed) {
  Q8Matrix m = testing::QuantizeRandom(GgmlType::Q8_0, rows, cols, seed);
  // A -128 quant, which Q8_0 files may hold (llama.cpp's quantizer never writes it).
  reinterpret_cast<BlockQ8_0*>(m.bytes.data())[0].qs[5] = -128;
  return m;
}

TEST(RepackQ8_0x8, EveryQuantAndScaleLandsInItsLane) {
  const int64_t rows = 13, cols = 96, nb = cols / kQK;
  Q8Matrix m = MakeQ8(rows, cols, 1);
  ASSERT_TRUE(CanRepackQ8_0x8(m.w));
  EXPECT_EQ(RepackedBytesQ8_0x8(m.w), 2u * nb * sizeof(BlockQ8_0x8));
  RepackedWeights store;
  const WeightMatrix v = store.Add(m.w, ActiveKernels());
  EXPECT_EQ(v.layout, WeightLayout::kQ8_0x8);
  EXPECT_EQ(v.rows, rows);
  EXPECT_EQ(v.cols, cols);
  EXPECT_TRUE(v.Validate().ok());
  EXPECT_FALSE(CanRepackQ8_0x8(v));  // already repacked
  const auto lane_matches = [](const BlockQ8_0x8& blk, int lane, const BlockQ8_0* src) {
    EXPECT_EQ(blk.d[lane], src ? src->d : 0);
    for (int c = 0; c < kQK; ++c) EXPECT_EQ(blk.qs[kQK * (c / 4) + 4 * lane + c % 4], src ? src->qs[c] : 0) << c;
  };
  testing::ForEachRepackedLane<BlockQ8_0x8, BlockQ8_0>(v, m, nb, lane_matches);
}

TEST(Repack, OtherTypesAreLeftAsTheyAre) {
  std::vector<uint8_t> buf(RowBytes(GgmlType::Q4_0, 64) * 8);
  const WeightMatrix q4 = MakeWeightMatrix(GgmlType::Q4_0, buf.data(), 8, 64);
  EXPECT_FALSE(CanRepackQ8_0x8(q4));
  EXPECT_FALSE(CanRepackHalf4(q4));
  RepackedWeights store;
  const WeightMatrix same = store.Add(q4, ActiveKernels());
  EXPECT_EQ(same.data, q4.data);
  EXPECT_EQ(same.layout, WeightLayout::kRowMajor);
  EXPECT_EQ(store.bytes(), 0u);
  // A repacked view of a type that has no such layout is not a matrix MatMul can run.
  WeightMatrix odd = q4;
  odd.layout = WeightLayout::kQ8_0x8;
  EXPECT_EQ(odd.Validate().code(), StatusCode::kUnimplemented);
  odd.layout = WeightLayout::kHalf4;
  EXPECT_EQ(odd.Validate().code(), StatusCode::kUnimplemented);
}

TEST(RepackedWeights, AddAllRepacksInParallelAsAddDoes) {
  Q8Matrix a = MakeQ8(24, 64, 3), b = MakeQ8(13, 96, 4);
  std::vector<uint8_t> q4(RowBytes(GgmlType::Q4_0, 64) * 8);
  WeightMatrix ma = a.w, mb = b.w, mq = MakeWeightMatrix(GgmlType::Q4_0, q4.data(), 8, 64);
  const std::vector<WeightMatrix*> ms{&ma, &mq, &mb};
  RepackedWeights all, one;
  ThreadPool pool(3);
  std::vector<int> seen(ms.size(), 0);
  all.AddAll(ms, pool, Avx2Kernels(), [&](size_t i, const WeightMatrix& src) {
    ++seen[i];
    EXPECT_EQ(src.layout, WeightLayout::kRowMajor);
    EXPECT_EQ(src.data, i == 0 ? a.w.data : b.w.data);
  });
  EXPECT_EQ(seen, (std::vector<int>{1, 0, 1}));  // Q4_0 has no repacked layout
  EXPECT_EQ(mq.data, q4.data());
  const WeightMatrix va = one.Add(a.w, Avx2Kernels()), vb = one.Add(b.w, Avx2Kernels());
  EXPECT_EQ(all.bytes(), one.bytes());
  ASSERT_EQ(ma.layout, WeightLayout::kQ8_0x8);
  ASSERT_EQ(mb.layout, WeightLayout::kQ8_0x8);
  EXPECT_EQ(0, std::memcmp(ma.data, va.data, RepackedBytesQ8_0x8(a.w)));
  EXPECT_EQ(0, std::memcmp(mb.data, vb.data, RepackedBytesQ8_0x8(b.w)));
}

// Every kernel level gives the scalar reference's bits, for every tile shape
// (1-9 tokens), partial groups and row ranges that end inside a group; and
// the result is within quantization noise of the row-major Q8_0 product.
TEST(GemmQ8_0x8, EveryLevelMatchesScalarBitForBit) {
  for (int64_t rows : {8, 13, 24, 40, 64}) {
    const int64_t cols = 128;
    Q8Matrix m = MakeQ8(rows, cols, 7 + static_cast<uint32_t>(rows));
    RepackedWeights store;
    const WeightMatrix v = store.Add(m.w, ActiveKernels());
    for (int64_t n_tok = 1; n_tok <= 9; ++n_tok) {
      const std::vector<float> x = RandomWeights(static_cast<size_t>(n_tok * cols), 99, 1.0f);
      std::vector<BlockQ8_0> xq(static_cast<size_t>(n_tok * cols / kQK));
      for (int64_t t = 0; t < n_tok; ++t) ScalarKernels().quantize_q8_0(x.data() + t * cols, &xq[t * cols / kQK], cols);
      const size_t xs = sizeof(BlockQ8_0) * cols / kQK;
      std::vector<float> want(static_cast<size_t>(n_tok * rows), -1.0f);
      ScalarKernels().gemm[static_cast<int>(WeightKind::kQ8_0x8)](v, xq.data(), xs, 0, n_tok, 0, rows, want.data(),
                                                                  rows);
      std::vector<float> rowmajor(want.size());
      ScalarKernels().gemm[static_cast<int>(WeightKind::kQ8_0)](m.w, xq.data(), xs, 0, n_tok, 0, rows, rowmajor.data(),
                                                                rows);
      for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(want[i], rowmajor[i], 1e-5f * (1 + std::fabs(want[i])));
      for (const CpuKernels* k : HostKernelTables()) {
        SCOPED_TRACE(std::string(IsaName(k->level)) + " rows " + std::to_string(rows) + " tokens " +
                     std::to_string(n_tok));
        // Ranges starting and ending inside a group or a pair of groups write exactly their rows.
        ExpectGemmBitsInRanges(k->gemm[static_cast<int>(WeightKind::kQ8_0x8)], v, xq.data(), xs, n_tok, rows, want);
      }
    }
  }
}

// Q5_0 becomes Q8_0x8 losslessly: the view dequantizes to the same values,
// runs the Q8_0x8 kernels, and every level gives the scalar bits.
TEST(RepackQ5_0AsQ8_0x8, SameValuesAndQ8_0x8Kernels) {
  const int64_t rows = 13, cols = 128, nb = cols / kQK;
  const std::vector<float> wf = RandomWeights(static_cast<size_t>(rows * cols), 21);
  const size_t rb = RowBytes(GgmlType::Q5_0, cols);
  std::vector<uint8_t> q5(rb * rows);
  for (int64_t r = 0; r < rows; ++r)
    ASSERT_TRUE(QuantizeRow(GgmlType::Q5_0, wf.data() + r * cols, q5.data() + r * rb, cols).ok());
  const WeightMatrix w = MakeWeightMatrix(GgmlType::Q5_0, q5.data(), rows, cols);
  ASSERT_TRUE(CanRepackQ5_0AsQ8_0x8(w));
  EXPECT_FALSE(CanRepackQ8_0x8(w));
  RepackedWeights store;
  const WeightMatrix v = store.Add(w, ScalarKernels());
  EXPECT_EQ(v.layout, WeightLayout::kQ8_0x8);
  EXPECT_EQ(v.type, GgmlType::Q8_0);
  EXPECT_EQ(v.row_bytes, RowBytes(GgmlType::Q8_0, cols));
  EXPECT_TRUE(v.Validate().ok());
  EXPECT_EQ(store.bytes(), 2u * nb * sizeof(BlockQ8_0x8));
  const auto* g = static_cast<const BlockQ8_0x8*>(v.data);
  std::vector<float> want(cols);
  for (int64_t r = 0; r < rows; ++r) {
    ASSERT_TRUE(DequantizeRow(GgmlType::Q5_0, q5.data() + r * rb, want.data(), cols).ok());
    for (int64_t c = 0; c < cols; ++c) {
      const BlockQ8_0x8& blk = g[(r / 8) * nb + c / kQK];
      const int lane = static_cast<int>(r % 8), i = static_cast<int>(c % kQK);
      EXPECT_EQ(F16ToF32(blk.d[lane]) * blk.qs[kQK * (i / 4) + 4 * lane + i % 4], want[c]) << r << " " << c;
    }
  }
  const int64_t n_tok = 5;
  const std::vector<float> x = RandomWeights(static_cast<size_t>(n_tok * cols), 22, 1.0f);
  std::vector<BlockQ8_0> xq(static_cast<size_t>(n_tok * nb));
  for (int64_t t = 0; t < n_tok; ++t) ScalarKernels().quantize_q8_0(x.data() + t * cols, &xq[t * nb], cols);
  const size_t xs = sizeof(BlockQ8_0) * nb;
  std::vector<float> ref(static_cast<size_t>(n_tok * rows)), rowmajor(ref.size());
  ScalarKernels().gemm[static_cast<int>(WeightKind::kQ8_0x8)](v, xq.data(), xs, 0, n_tok, 0, rows, ref.data(), rows);
  ScalarKernels().gemm[static_cast<int>(WeightKind::kQ5_0)](w, xq.data(), xs, 0, n_tok, 0, rows, rowmajor.data(), rows);
  for (size_t i = 0; i < ref.size(); ++i) EXPECT_NEAR(ref[i], rowmajor[i], 1e-5f * (1 + std::fabs(ref[i])));
  for (const CpuKernels* k : HostKernelTables()) {
    std::vector<float> got(ref.size());
    k->gemm[static_cast<int>(WeightKind::kQ8_0x8)](v, xq.data(), xs, 0, n_tok, 0, rows, got.data(), rows);
    EXPECT_EQ(0, std::memcmp(got.data(), ref.data(), ref.size() * sizeof(float))) << IsaName(k->level);
  }
}

TEST(RepackHalf4, EveryElementLandsInItsGroupChunkAndLane) {
  const int64_t rows = 11, cols = 96;
  for (GgmlType type : {GgmlType::F16, GgmlType::BF16}) {
    std::vector<uint16_t> src(static_cast<size_t>(rows * cols));
    for (size_t i = 0; i < src.size(); ++i) src[i] = static_cast<uint16_t>(i + 1);
    const WeightMatrix w = MakeWeightMatrix(type, src.data(), rows, cols);
    ASSERT_TRUE(CanRepackHalf4(w));
    RepackedWeights store;
    const WeightMatrix v = testing::RepackForAvx2(store, w, WeightLayout::kHalf4);
    const auto* d = static_cast<const uint16_t*>(v.data);
    EXPECT_EQ(RepackedBytesHalf4(w), 12u * cols * 2);  // 3 groups of 4 rows
    for (int64_t r = 0; r < 12; ++r)
      for (int64_t c = 0; c < cols; ++c) {
        const uint16_t got = d[(r / 4) * 4 * cols + 128 * (c / 32) + 32 * (r % 4) + c % 32];
        EXPECT_EQ(got, r < rows ? src[r * cols + c] : 0) << r << " " << c;
      }
  }
  std::vector<uint16_t> odd(8 * 48);
  EXPECT_FALSE(CanRepackHalf4(MakeWeightMatrix(GgmlType::F16, odd.data(), 8, 48)));  // cols % 32 != 0
}

// Half4 only changes where rows are read: a Half4 kernel gives the bits of
// the row-major kernel of the same implementation (scalar's of scalar,
// AVX2's of AVX2; the AVX-512 table runs the AVX2 Half4 kernels), for every
// tile shape and ranges ending inside a group.
TEST(GemmHalf4, EveryLevelMatchesItsRowMajorKernel) {
  for (GgmlType type : {GgmlType::F16, GgmlType::BF16}) {
    for (int64_t rows : {4, 13, 64}) {
      const int64_t cols = 96;
      const std::vector<float> wf = RandomWeights(static_cast<size_t>(rows * cols), 5);
      std::vector<uint8_t> wq(RowBytes(type, cols) * rows);
      for (int64_t r = 0; r < rows; ++r)
        ASSERT_TRUE(QuantizeRow(type, wf.data() + r * cols, wq.data() + r * RowBytes(type, cols), cols).ok());
      const WeightMatrix w = MakeWeightMatrix(type, wq.data(), rows, cols);
      RepackedWeights store;
      const WeightMatrix v = store.Add(w, Avx2Kernels());
      const int kind = static_cast<int>(WeightKindOf(v));
      const int row_kind = static_cast<int>(WeightKindOf(w));
      ASSERT_NE(kind, row_kind);
      for (int64_t n_tok = 1; n_tok <= 7; ++n_tok) {
        const std::vector<float> x = RandomWeights(static_cast<size_t>(n_tok * cols), 17, 1.0f);
        const size_t xs = cols * sizeof(float);
        for (const CpuKernels* k : HostKernelTables()) {
          SCOPED_TRACE(std::string(IsaName(k->level)) + " " + TypeName(type) + " rows " + std::to_string(rows) +
                       " tokens " + std::to_string(n_tok));
          std::vector<float> want(static_cast<size_t>(n_tok * rows), -1.0f);
          const CpuKernels& same_impl = k->level == IsaLevel::kAvx512 ? Avx2Kernels() : *k;
          same_impl.gemm[row_kind](w, x.data(), xs, 0, n_tok, 0, rows, want.data(), rows);
          ExpectGemmBits(k->gemm[kind], v, x.data(), xs, n_tok, rows, want, 3, rows - 2);
        }
      }
    }
  }
}

}  // namespace
}  // namespace pg

namespace pg {
namespace {

// FP8x4 only changes where rows are read: its AVX-512 kernel gives the bits
// of the AVX-512 row-major kernel, and the scalar reference (the other
// tables' entry) those of the scalar row-major one, for every tile shape,
// ranges starting and ending inside a group, and a last group of padding.
TEST(GemmFP8x4, EveryLevelMatchesItsRowMajorKernel) {
  for (int64_t rows : {4, 13, 64}) {
    const int64_t cols = 192;
    const std::vector<float> wf = RandomWeights(static_cast<size_t>(rows * cols), 5);
    std::vector<uint8_t> wq(RowBytes(GgmlType::FP8_E4M3, cols) * rows);
    ASSERT_TRUE(QuantizeRow(GgmlType::FP8_E4M3, wf.data(), wq.data(), rows * cols).ok());
    const WeightMatrix w = MakeWeightMatrix(GgmlType::FP8_E4M3, wq.data(), rows, cols);
    ASSERT_TRUE(CanRepackFP8x4(w));
    EXPECT_EQ(RepackedBytesFP8x4(w), static_cast<size_t>((rows + 3) / 4 * 4) * RowBytes(GgmlType::FP8_E4M3, cols));
    std::vector<uint8_t> buf(RepackedBytesFP8x4(w));
    const WeightMatrix v = RepackFP8x4(w, buf.data());
    ASSERT_EQ(WeightKindOf(v), WeightKind::kFP8x4);
    // Row r's block b is lane r % 4 of its group's block b.
    const auto* g = reinterpret_cast<const BlockFP8x4*>(buf.data());
    const auto* src = reinterpret_cast<const BlockFP8_E4M3*>(wq.data());
    const int64_t nb = cols / kQKNV;
    EXPECT_EQ(g[(rows - 1) / 4 * nb + 1].d[(rows - 1) % 4], src[(rows - 1) * nb + 1].d);
    EXPECT_EQ(0, std::memcmp(g[(rows - 1) / 4 * nb + 2].q[(rows - 1) % 4], src[(rows - 1) * nb + 2].q, kQKNV));
    const int kind = static_cast<int>(WeightKind::kFP8x4), row_kind = static_cast<int>(WeightKind::kFP8_E4M3);
    for (int64_t n_tok = 1; n_tok <= 7; ++n_tok) {
      const std::vector<float> x = RandomWeights(static_cast<size_t>(n_tok * cols), 17, 1.0f);
      const size_t xs = cols * sizeof(float);
      for (const CpuKernels* k : HostKernelTables()) {
        SCOPED_TRACE(std::string(IsaName(k->level)) + " rows " + std::to_string(rows) + " tokens " +
                     std::to_string(n_tok));
        std::vector<float> want(static_cast<size_t>(n_tok * rows), -1.0f);
        const CpuKernels& same_impl = k->fp8x4 ? *k : ScalarKernels();
        same_impl.gemm[row_kind](w, x.data(), xs, 0, n_tok, 0, rows, want.data(), rows);
        ExpectGemmBits(k->gemm[kind], v, x.data(), xs, n_tok, rows, want, 0, rows);
        ExpectGemmBitsInRanges(k->gemm[kind], v, x.data(), xs, n_tok, rows, want);
      }
    }
  }
}

// Models repack FP8_E4M3 only where the table has an FP8x4 kernel of its own.
TEST(RepackFP8x4, OnlyWhereTheTableAsksForIt) {
  const std::vector<float> wf = RandomWeights(8 * 128, 3);
  std::vector<uint8_t> wq(RowBytes(GgmlType::FP8_E4M3, 128) * 8);
  ASSERT_TRUE(QuantizeRow(GgmlType::FP8_E4M3, wf.data(), wq.data(), 8 * 128).ok());
  const WeightMatrix w = MakeWeightMatrix(GgmlType::FP8_E4M3, wq.data(), 8, 128);
  RepackedWeights store;
  for (const CpuKernels* k : HostKernelTables()) {
    const WeightMatrix v = store.Add(w, *k);
    EXPECT_EQ(v.layout, k->fp8x4 ? WeightLayout::kFP8x4 : WeightLayout::kRowMajor) << IsaName(k->level);
    EXPECT_TRUE(v.Validate().ok());
    if (k->fp8x4) {
      EXPECT_EQ(GroupOffset(v, 4), 4 * RowBytes(GgmlType::FP8_E4M3, 128));
    }
  }
  EXPECT_FALSE(ScalarKernels().fp8x4);
}

}  // namespace
}  // namespace pg
