// MlaAttend against a float64 reference of the same math, and the sparse
// (read only the chosen rows) and dense-masked (score every key, mask the
// rest) modes against each other, bit for bit.
#include "model/mla_attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "backend/cpu/cpu_features.h"
#include "backend/cpu/fp16.h"
#include "model/topk_select.h"

namespace pg {
namespace {

constexpr int64_t kLora = 40, kRope = 16, kRow = kLora + kRope, kHeads = 4, kPage = 16;

// An MLA arena of one layer, n_keys random latent rows (f16 unless told).
struct LatentArena {
  LatentArena(int64_t n_keys, uint32_t seed, int64_t lora = kLora, int64_t rope = kRope, int64_t heads = kHeads,
              KvDtype dtype = KvDtype::kF16)
      : lora(lora), rope(rope), heads(heads) {
    const int64_t R = lora + rope;
    pages.layout = KvLayout{1, 1, static_cast<int>(R), static_cast<int>(kPage), dtype, AttentionKind::kMla};
    pages.block_bytes = pages.layout.block_bytes();
    const int64_t nb = n_keys / kPage + 1;
    mem.resize(pages.block_bytes * nb);
    pages.base = mem.data();
    for (int32_t b = 0; b < nb; ++b) table.push_back(nb - 1 - b);  // blocks out of order
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd;
    for (int64_t s = 0; s < n_keys; ++s) {
      uint16_t* row = pages.Row(table[s / kPage], 0, 0, s % kPage);
      for (int64_t d = 0; d < R; ++d) {
        const float x = nd(rng);
        if (dtype == KvDtype::kF32)
          std::memcpy(reinterpret_cast<float*>(row) + d, &x, sizeof(float));
        else
          row[d] = dtype == KvDtype::kF16 ? F32ToF16(x) : F32ToBF16(x);
      }
    }
  }
  MlaAttentionArgs Args() const { return {&pages, table.data(), 0, lora, rope, heads, 0.3f}; }
  int64_t lora, rope, heads;
  float At(int64_t s, int64_t d) const { return F16ToF32(pages.Row(table[s / kPage], 0, 0, s % kPage)[d]); }
  KvPages pages;
  std::vector<uint8_t> mem;
  std::vector<int32_t> table;
};

std::vector<float> RandomQueries(uint32_t seed, int64_t n = kHeads * kRow) {
  std::mt19937 rng(seed);
  std::normal_distribution<float> nd;
  std::vector<float> q(n);
  for (float& x : q) x = nd(rng);
  return q;
}

std::vector<float> Attend(const LatentArena& a, const std::vector<float>& q, const int32_t* keys, int64_t n,
                          const uint8_t* allowed) {
  std::vector<float> out(kHeads * kLora), scratch(MlaAttendScratchFloats(a.Args(), 512));
  MlaAttend(a.Args(), q.data(), keys, n, allowed, out.data(), scratch.data());
  return out;
}

TEST(MlaAttend, MatchesAFloat64ReferenceOverTheLatentRows) {
  const int64_t n = 70;
  LatentArena arena(n, 1);
  const std::vector<float> q = RandomQueries(2);
  const std::vector<float> out = Attend(arena, q, nullptr, n, nullptr);
  for (int64_t h = 0; h < kHeads; ++h) {
    std::vector<double> p(n);
    double mx = -INFINITY, sum = 0;
    for (int64_t s = 0; s < n; ++s) {
      double dot = 0;
      for (int64_t d = 0; d < kRow; ++d) dot += static_cast<double>(q[h * kRow + d]) * arena.At(s, d);
      p[s] = 0.3 * dot;
      mx = std::max(mx, p[s]);
    }
    for (double& x : p) sum += (x = std::exp(x - mx));
    for (int64_t d = 0; d < kLora; ++d) {
      double o = 0;
      for (int64_t s = 0; s < n; ++s) o += p[s] * arena.At(s, d);  // V is the latent part of the row
      EXPECT_NEAR(out[h * kLora + d], o / sum, 1e-4) << "head " << h << " dim " << d;
    }
  }
}

TEST(MlaAttend, SparseAndDenseMaskedAgreeBitForBitWhenTheSelectionCoversEverything) {
  const int64_t n = 16;
  LatentArena arena(n, 3);
  const std::vector<float> q = RandomQueries(4);
  std::vector<int32_t> all(n), scratch(n);
  std::vector<float> scores(n, 0.0f);
  ASSERT_EQ(TopKSelect(scores.data(), n, 16, all.data(), scratch.data()), n);
  const std::vector<uint8_t> allowed(n, 1);
  const std::vector<float> sparse = Attend(arena, q, all.data(), n, nullptr);
  const std::vector<float> dense = Attend(arena, q, nullptr, n, allowed.data());
  const std::vector<float> plain = Attend(arena, q, nullptr, n, nullptr);
  EXPECT_EQ(0, std::memcmp(sparse.data(), dense.data(), sparse.size() * sizeof(float)));
  EXPECT_EQ(0, std::memcmp(sparse.data(), plain.data(), sparse.size() * sizeof(float)));
}

TEST(MlaAttend, DenseMaskedGivesTheSparseBitsPastTopK) {
  const int64_t n = 300, k = 16;
  LatentArena arena(n, 5);
  const std::vector<float> q = RandomQueries(6);
  std::mt19937 rng(7);
  std::vector<float> scores(n);
  for (float& x : scores) x = static_cast<float>(rng() % 1000);
  std::vector<int32_t> sel(k), scratch(n);
  ASSERT_EQ(TopKSelect(scores.data(), n, k, sel.data(), scratch.data()), k);
  std::vector<uint8_t> allowed(n, 0);
  for (int32_t s : sel) allowed[s] = 1;
  const std::vector<float> sparse = Attend(arena, q, sel.data(), k, nullptr);
  const std::vector<float> dense = Attend(arena, q, nullptr, n, allowed.data());
  EXPECT_EQ(0, std::memcmp(sparse.data(), dense.data(), sparse.size() * sizeof(float)));
  // ... and the mask matters: attending to every key gives something else.
  const std::vector<float> all = Attend(arena, q, nullptr, n, nullptr);
  EXPECT_NE(0, std::memcmp(sparse.data(), all.data(), sparse.size() * sizeof(float)));
}

using MlaForm = void (*)(const MlaAttentionArgs&, const float*, const int32_t*, int64_t, const uint8_t*, float*,
                         float*);

std::vector<float> AttendWith(MlaForm form, const LatentArena& a, const std::vector<float>& q, const int32_t* keys,
                              int64_t n, const uint8_t* allowed) {
  std::vector<float> out(a.heads * a.lora, NAN), scratch(MlaAttendScratchFloats(a.Args(), n), NAN);
  form(a.Args(), q.data(), keys, n, allowed, out.data(), scratch.data());
  return out;
}

// Every form (the active ISA's MlaAttend, and AVX-512 where the host runs it)
// gives the scalar reference's bits: odd head counts, rows and latents with
// tails past a multiple of 8 and 16, every key dtype, key lists and masks.
TEST(MlaAttend, EveryFormMatchesTheScalarReferenceBitForBit) {
  std::vector<std::pair<const char*, MlaForm>> forms = {{"active", &MlaAttend}};
  if (HostSupports(IsaLevel::kAvx512)) forms.push_back({"avx512", &MlaAttendAvx512});
  struct Shape {
    int64_t lora, rope, heads, n;
    KvDtype dtype;
  };
  const Shape shapes[] = {{512, 64, 8, 70, KvDtype::kF16},  {40, 16, 4, 33, KvDtype::kF16},
                          {37, 5, 9, 21, KvDtype::kBF16},   {64, 8, 1, 1, KvDtype::kF32},
                          {100, 12, 17, 50, KvDtype::kF16}, {16, 3, 3, 5, KvDtype::kF32}};
  uint32_t seed = 10;
  for (const Shape& sh : shapes) {
    LatentArena arena(sh.n, ++seed, sh.lora, sh.rope, sh.heads, sh.dtype);
    const std::vector<float> q = RandomQueries(++seed, sh.heads * (sh.lora + sh.rope));
    std::vector<int32_t> keys;
    std::vector<uint8_t> allowed(static_cast<size_t>(sh.n));
    for (int64_t j = 0; j < sh.n; ++j) {
      allowed[static_cast<size_t>(j)] = j % 3 != 1;
      if (j % 3 != 1) keys.push_back(static_cast<int32_t>(j));
    }
    const auto nk = static_cast<int64_t>(keys.size());
    for (const auto& [name, form] : forms) {
      const std::string what =
          std::string(name) + " lora " + std::to_string(sh.lora) + " heads " + std::to_string(sh.heads);
      auto same = [&](const std::vector<float>& x, const std::vector<float>& y) {
        return x.size() == y.size() && std::memcmp(x.data(), y.data(), x.size() * sizeof(float)) == 0;
      };
      EXPECT_TRUE(same(AttendWith(form, arena, q, nullptr, sh.n, nullptr),
                       AttendWith(&MlaAttendScalar, arena, q, nullptr, sh.n, nullptr)))
          << what << " all keys";
      EXPECT_TRUE(same(AttendWith(form, arena, q, nullptr, sh.n, allowed.data()),
                       AttendWith(&MlaAttendScalar, arena, q, nullptr, sh.n, allowed.data())))
          << what << " masked";
      EXPECT_TRUE(same(AttendWith(form, arena, q, keys.data(), nk, nullptr),
                       AttendWith(&MlaAttendScalar, arena, q, keys.data(), nk, nullptr)))
          << what << " key list";
    }
  }
}

}  // namespace
}  // namespace pg
