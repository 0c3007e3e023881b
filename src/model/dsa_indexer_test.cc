// The lightning indexer's scores against a float64 reference, read from an
// MLA block's indexer key pages.
#include "model/dsa_indexer.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "backend/cpu/fp16.h"

namespace pg {
namespace {

// The host's vector versions (AVX2 + FMA where present) give the scalar references' bits: the same
// fused multiply-adds in the same order, lane for lane, tails included.
TEST(DsaVectors, DotLanes8AndFmaRowMatchTheScalarReferenceBitForBit) {
  std::mt19937 rng(5);
  std::normal_distribution<float> nd;
  for (int64_t n : {1, 7, 8, 9, 64, 127, 576}) {
    std::vector<float> a(n), b(n), o1(n), o2(n);
    for (int64_t i = 0; i < n; ++i) a[i] = nd(rng), b[i] = nd(rng), o1[i] = o2[i] = nd(rng);
    const float d1 = DotLanes8(a.data(), b.data(), n), d2 = DotLanes8Scalar(a.data(), b.data(), n);
    EXPECT_EQ(std::memcmp(&d1, &d2, sizeof d1), 0) << n;
    FmaRow(0.37f, a.data(), o1.data(), n);
    FmaRowScalar(0.37f, a.data(), o2.data(), n);
    EXPECT_EQ(std::memcmp(o1.data(), o2.data(), n * sizeof(float)), 0) << n;
  }
}

TEST(IndexerScores, MatchAFloat64ReferenceOfTheWeightedReluDots) {
  constexpr int64_t kHeads = 8, kDim = 36, kPage = 16, kKeys = 50;
  KvPages kv;
  kv.layout = KvLayout{2, 1, 24, kPage, KvDtype::kF16, AttentionKind::kMla, 2, kDim};
  kv.block_bytes = kv.layout.block_bytes();
  std::vector<uint8_t> mem(kv.block_bytes * 4);
  kv.base = mem.data();
  const std::vector<int32_t> table{2, 0, 3, 1};
  std::mt19937 rng(11);
  std::normal_distribution<float> nd;
  for (int64_t s = 0; s < kKeys; ++s)
    for (int64_t d = 0; d < kDim; ++d) kv.IndexRow(table[s / kPage], 1, s % kPage)[d] = F32ToF16(nd(rng));
  std::vector<float> iq(kHeads * kDim), w(kHeads), scores(kKeys), key(kIndexerKeyGroup * kDim);
  for (float& x : iq) x = nd(rng);
  for (float& x : w) x = nd(rng);
  IndexerScores({&kv, table.data(), 1, kHeads, kDim}, iq.data(), w.data(), kKeys, scores.data(), key.data());
  for (int64_t s = 0; s < kKeys; ++s) {
    double want = 0;
    for (int64_t h = 0; h < kHeads; ++h) {
      double dot = 0;
      for (int64_t d = 0; d < kDim; ++d)
        dot += static_cast<double>(iq[h * kDim + d]) * F16ToF32(kv.IndexRow(table[s / kPage], 1, s % kPage)[d]);
      want += w[h] * std::max(dot, 0.0);
    }
    EXPECT_NEAR(scores[s], want, 1e-4 * (1 + std::fabs(want))) << "key " << s;
  }
}

// IndexerScores (eight keys at once where the host has AVX2 and FMA) gives each key the bits of
// KeyScoreScalar: dims with and without a tail, key counts past and short of a group, keys whose
// dots are negative for some heads (the relu), and f16 / bf16 caches.
TEST(IndexerScores, EveryKeyHasTheScalarReferenceBits) {
  constexpr int64_t kHeads = 5, kPage = 16;
  std::mt19937 rng(12);
  std::normal_distribution<float> nd;
  for (KvDtype dtype : {KvDtype::kF16, KvDtype::kBF16})
    for (int dim : {8, 36, 128})
      for (int64_t n_keys : {3, 8, 29, 64}) {
        KvPages kv;
        kv.layout = KvLayout{2, 1, 24, kPage, dtype, AttentionKind::kMla, 1, dim};
        kv.block_bytes = kv.layout.block_bytes();
        std::vector<uint8_t> mem(kv.block_bytes * 4);
        kv.base = mem.data();
        const std::vector<int32_t> table{3, 1, 0, 2};
        for (int64_t s = 0; s < n_keys; ++s)
          for (int64_t d = 0; d < dim; ++d) {
            const float v = nd(rng);
            kv.IndexRow(table[s / kPage], 0, s % kPage)[d] = dtype == KvDtype::kF16 ? F32ToF16(v) : F32ToBF16(v);
          }
        std::vector<float> iq(kHeads * dim), w(kHeads), scores(n_keys), key(kIndexerKeyGroup * dim), row(dim);
        for (float& x : iq) x = nd(rng);
        for (float& x : w) x = std::fabs(nd(rng));
        IndexerScores({&kv, table.data(), 0, kHeads, dim}, iq.data(), w.data(), n_keys, scores.data(), key.data());
        for (int64_t s = 0; s < n_keys; ++s) {
          WidenRow(kv.IndexRow(table[s / kPage], 0, s % kPage), dtype, row.data(), dim);
          const float want = KeyScoreScalar(iq.data(), w.data(), kHeads, dim, row.data());
          EXPECT_EQ(std::memcmp(&scores[s], &want, sizeof want), 0)
              << "dim " << dim << " keys " << n_keys << " key " << s << ": " << scores[s] << " vs " << want;
        }
      }
}

TEST(DotLanes8, SumsEveryElementIncludingTheTail) {
  std::vector<float> a(19), b(19);
  for (int i = 0; i < 19; ++i) a[i] = static_cast<float>(i), b[i] = 1.0f;
  EXPECT_EQ(DotLanes8(a.data(), b.data(), 19), 171.0f);
}

}  // namespace
}  // namespace pg
