// kTiledF32 attention: AVX2 / AVX-512 vs scalar bit-identity, independence from the
// group/batch a query is computed in, agreement with a double-precision
// softmax, and ExpF32 against the correctly rounded exp.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "backend/cpu/cpu_features.h"
#include "backend/cpu/fp16.h"
#include "model/attention.h"
#include "model/attention_exp.h"
#include "model/test_attention_fixture.h"

namespace pg {
namespace {

// A sequence of n_keys f16 K/V rows in scattered pages, and n_q query vectors
// per head of one GQA group.
struct Fixture : AttentionFixture {
  Fixture(int64_t head_dim, int64_t n_kv_heads, int64_t n_keys, int64_t page_tokens, uint32_t seed, float sd = 2.0f)
      : AttentionFixture(head_dim, n_kv_heads, n_keys, page_tokens, KvDtype::kF16, seed, sd, /*n_q=*/8) {}
};

using GroupFn = void (*)(const AttentionArgs&, std::span<const AttentionQuery>, float*);

// Queries i = 0.. with q vector i % 8 and n_keys[i], through `fn`.
std::vector<float> RunGroupWith(const Fixture& f, const std::vector<int64_t>& n_keys, GroupFn fn) {
  const int64_t HD = f.args.head_dim, nq = static_cast<int64_t>(n_keys.size());
  std::vector<float> out(static_cast<size_t>(nq * HD), -1.0f);
  std::vector<AttentionQuery> qs;
  for (int64_t i = 0; i < nq; ++i) qs.push_back({f.Q(i % 8), out.data() + i * HD, n_keys[i]});
  int64_t mx = 0;
  for (int64_t n : n_keys) mx = std::max(mx, n);
  std::vector<float> scratch(AttendGroupScratchFloats(HD, nq, mx), std::nanf(""));
  fn(f.args, qs, scratch.data());
  return out;
}

std::vector<float> RunGroup(const Fixture& f, const std::vector<int64_t>& n_keys, bool avx2) {
  return RunGroupWith(f, n_keys, avx2 ? &AttendGroupAvx2 : &AttendGroupScalar);
}

// The SIMD forms this host runs, each with its name.
struct SimdForm {
  const char* name;
  GroupFn fn;
};
std::vector<SimdForm> SimdForms() {
  std::vector<SimdForm> forms;
  if (HostSupports(IsaLevel::kAvx2)) forms.push_back({"avx2", &AttendGroupAvx2});
  if (HostSupports(IsaLevel::kAvx512)) forms.push_back({"avx512", &AttendGroupAvx512});
  return forms;
}

TEST(AttentionTiled, Avx2IsBitIdenticalToScalar) {
  if (!HostSupports(IsaLevel::kAvx2)) GTEST_SKIP() << "no AVX2";
  for (int64_t page : {16, 32})
    for (int64_t hd : {64, 128, 8, 72})
      for (int64_t n = 1; n <= 300; n += (n < 70 ? 1 : 23)) {
        Fixture f(hd, 2, n, page, static_cast<uint32_t>(hd * 1000 + n + page));
        // A group of several heads and rows with different causal lengths.
        std::vector<int64_t> lens = {n, std::max<int64_t>(1, n - 1), std::max<int64_t>(1, n / 2), n, 1};
        std::vector<float> a = RunGroup(f, lens, false), b = RunGroup(f, lens, true);
        ASSERT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float)))
            << "hd " << hd << " n " << n << " page " << page;
      }
}

// Every SIMD form the host runs: group sizes 1..20 (the AVX-512 form blocks
// queries by four), causal lengths that end inside, at and past tile and page
// boundaries, head dims that are and are not multiples of 16, 32 and 64, q
// rounded or not.
TEST(AttentionTiled, SimdIsBitIdenticalToScalar) {
  if (SimdForms().empty()) GTEST_SKIP() << "no AVX2";
  int cases = 0;
  for (const SimdForm& form : SimdForms())
    for (int64_t page : {16, 32, 7})
      for (int64_t hd : {64, 128, 80, 8, 40, 72, 256})
        for (int64_t n : {1, 2, 7, 8, 9, 31, 32, 33, 40, 64, 65, 97, 300, 1000, 1031}) {
          if (hd >= 256 && n > 300) continue;
          Fixture f(hd, 2, n, page, static_cast<uint32_t>(hd * 1000 + n + page));
          for (bool round_q : {true, false}) {
            f.args.round_q = round_q;
            const int64_t nq = 1 + (n + hd + page + (round_q ? 0 : 7)) % 20;
            std::vector<int64_t> lens;
            for (int64_t i = 0; i < nq; ++i) {
              // Mostly consecutive causal rows ending at n, some shorter, some equal.
              const int64_t len =
                  i % 5 == 4 ? std::max<int64_t>(1, n / (i + 1)) : n - (i / 2) % std::max<int64_t>(1, n);
              lens.push_back(std::max<int64_t>(1, len));
            }
            const std::vector<float> ref = RunGroupWith(f, lens, AttendGroupScalar);
            const std::vector<float> got = RunGroupWith(f, lens, form.fn);
            ASSERT_EQ(0, std::memcmp(ref.data(), got.data(), ref.size() * sizeof(float)))
                << form.name << " hd " << hd << " n " << n << " page " << page << " nq " << nq << " round_q "
                << round_q;
            ++cases;
          }
        }
  std::printf("%d SIMD groups bit-identical to scalar\n", cases);
}

// Each query of a SIMD group equals that query computed alone, whatever the
// block it lands in (the last block smaller).
TEST(AttentionTiled, SimdRowIsIndependentOfItsGroup) {
  if (SimdForms().empty()) GTEST_SKIP() << "no AVX2";
  Fixture f(128, 2, 700, 16, 17);
  for (const SimdForm& form : SimdForms())
    for (size_t nq = 1; nq <= 11; ++nq) {
      std::vector<int64_t> group;
      for (size_t i = 0; i < nq; ++i) group.push_back(700 - static_cast<int64_t>(i * 37 % 101));
      const std::vector<float> together = RunGroupWith(f, group, form.fn);
      for (size_t i = 0; i < nq; ++i) {
        std::vector<AttentionQuery> one = {{f.Q(static_cast<int64_t>(i % 8)), nullptr, group[i]}};
        std::vector<float> out(128), scratch(AttendGroupScratchFloats(128, 1, 700));
        one[0].out = out.data();
        form.fn(f.args, one, scratch.data());
        ASSERT_EQ(0, std::memcmp(out.data(), together.data() + i * 128, 128 * sizeof(float)))
            << form.name << " " << nq << " " << i;
      }
    }
}

// A prefill task's group (Model::AttentionGrouped: up to 4 rows x 8 heads,
// or 64 queries): many blocks per tile, rows ending inside and across a tile.
TEST(AttentionTiled, SimdPrefillGroupIsBitIdenticalToScalar) {
  if (SimdForms().empty()) GTEST_SKIP() << "no AVX2";
  for (const SimdForm& form : SimdForms())
    for (int64_t nq : {32, 33, 64})
      for (int64_t n : {30, 61, 500}) {
        Fixture f(64, 2, n, 16, static_cast<uint32_t>(nq * 7 + n));
        std::vector<int64_t> lens;
        for (int64_t i = 0; i < nq; ++i) lens.push_back(std::max<int64_t>(1, n - (nq - 1 - i) / 8));
        const std::vector<float> ref = RunGroupWith(f, lens, AttendGroupScalar);
        const std::vector<float> got = RunGroupWith(f, lens, form.fn);
        ASSERT_EQ(0, std::memcmp(ref.data(), got.data(), ref.size() * sizeof(float)))
            << form.name << " nq " << nq << " n " << n;
      }
}

// Keys with extreme values (scores far apart, so p underflows to 0 and the
// running max jumps, and large V) still agree bit for bit.
TEST(AttentionTiled, SimdIsBitIdenticalToScalarOnWideScores) {
  if (SimdForms().empty()) GTEST_SKIP() << "no AVX2";
  for (const SimdForm& form : SimdForms())
    for (int64_t hd : {64, 80})
      for (int64_t n : {33, 250}) {
        Fixture f(hd, 1, n, 16, static_cast<uint32_t>(hd + n), /*sd=*/30.0f);
        const std::vector<int64_t> lens = {n, n - 1, n / 2, 1, n - 32};
        const std::vector<float> ref = RunGroupWith(f, lens, AttendGroupScalar);
        const std::vector<float> got = RunGroupWith(f, lens, form.fn);
        ASSERT_EQ(0, std::memcmp(ref.data(), got.data(), ref.size() * sizeof(float)))
            << form.name << " hd " << hd << " n " << n;
      }
}

// With q kept in f32 (`--attn precise`), the same; and it differs from the rounded run.
TEST(AttentionTiled, Avx2IsBitIdenticalToScalarWithF32Queries) {
  if (!HostSupports(IsaLevel::kAvx2)) GTEST_SKIP() << "no AVX2";
  for (int64_t hd : {64, 72})
    for (int64_t n : {1, 31, 33, 200}) {
      Fixture f(hd, 2, n, 16, static_cast<uint32_t>(hd * 7 + n));
      const std::vector<int64_t> lens = {n, std::max<int64_t>(1, n / 2), 1};
      const std::vector<float> rounded = RunGroup(f, lens, false);
      f.args.round_q = false;
      const std::vector<float> a = RunGroup(f, lens, false), b = RunGroup(f, lens, true);
      ASSERT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float))) << "hd " << hd << " n " << n;
      if (n > 1) {  // one key: the output is that key's V whatever q is
        EXPECT_NE(0, std::memcmp(a.data(), rounded.data(), a.size() * sizeof(float))) << "hd " << hd << " n " << n;
      }
    }
}

TEST(AttentionTiled, RowIsIndependentOfItsGroup) {
  for (bool avx2 : {false, true}) {
    if (avx2 && !HostSupports(IsaLevel::kAvx2)) continue;
    Fixture f(64, 2, 200, 16, 7);
    const std::vector<int64_t> group = {200, 133, 96, 97, 31, 32, 33, 1};
    std::vector<float> together = RunGroup(f, group, avx2);
    for (size_t i = 0; i < group.size(); ++i) {
      // Query i alone (same q vector, same n_keys).
      std::vector<AttentionQuery> one = {{f.Q(static_cast<int64_t>(i % 8)), nullptr, group[i]}};
      std::vector<float> out(64), scratch(AttendGroupScratchFloats(64, 1, 200));
      one[0].out = out.data();
      if (avx2)
        AttendGroupAvx2(f.args, one, scratch.data());
      else
        AttendGroupScalar(f.args, one, scratch.data());
      ASSERT_EQ(0, std::memcmp(out.data(), together.data() + i * 64, 64 * sizeof(float))) << "query " << i;
    }
  }
}

// Prefix stability: the first n keys of two caches agree, the rest differ;
// a query over n keys gives the same bits in both.
TEST(AttentionTiled, IgnoresKeysAfterItsPrefix) {
  Fixture f(64, 2, 260, 16, 11);
  Fixture g(64, 2, 260, 16, 11);
  for (int64_t j = 150; j < 260; ++j)
    for (int kvv = 0; kvv < 2; ++kvv) {
      uint16_t* row = g.kv.Row(g.table[j / 16], 1, kvv, j % 16);
      for (int64_t d = 0; d < g.kv.kv_dim(); ++d) row[d] = F32ToF16(static_cast<float>((j * 31 + d) % 17) - 8.0f);
    }
  for (bool avx2 : {false, true}) {
    if (avx2 && !HostSupports(IsaLevel::kAvx2)) continue;
    // Query i uses q vector i % 8 in both groups; g's group adds a query over all 260 keys.
    std::vector<float> a = RunGroup(f, {150, 149, 140}, avx2), b = RunGroup(g, {150, 149, 140, 260}, avx2);
    EXPECT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float))) << "avx2 " << avx2;
  }
}

// Softmax-weighted V in double precision, with q rounded to f16 as the tiled path does.
std::vector<double> Reference(const Fixture& f, const float* q, int64_t n_keys) {
  const auto& a = f.args;
  const int64_t P = f.kv.page_tokens();
  std::vector<double> s(static_cast<size_t>(n_keys)), out(static_cast<size_t>(a.head_dim), 0.0);
  double mx = -1e300;
  for (int64_t j = 0; j < n_keys; ++j) {
    const uint16_t* k = f.kv.Row(a.block_table[j / P], a.layer, 0, j % P) + a.kv_head * a.head_dim;
    double dot = 0;
    for (int64_t d = 0; d < a.head_dim; ++d) dot += static_cast<double>(F16ToF32(k[d])) * F16ToF32(F32ToF16(q[d]));
    s[j] = dot * a.scale;
    mx = std::max(mx, s[j]);
  }
  double z = 0;
  for (auto& x : s) z += (x = std::exp(x - mx));
  for (int64_t j = 0; j < n_keys; ++j) {
    const uint16_t* v = f.kv.Row(a.block_table[j / P], a.layer, 1, j % P) + a.kv_head * a.head_dim;
    for (int64_t d = 0; d < a.head_dim; ++d) out[d] += s[j] / z * F16ToF32(v[d]);
  }
  return out;
}

TEST(AttentionTiled, MatchesDoubleReference) {
  double worst = 0;
  for (int64_t hd : {64, 128, 40})
    for (int64_t n : {1, 5, 31, 32, 33, 300, 1000}) {
      Fixture f(hd, 2, n, 16, static_cast<uint32_t>(hd * 3 + n), 1.0f);
      std::vector<float> out = RunGroup(f, {n}, false);
      std::vector<double> ref = Reference(f, f.Q(0), n);
      for (int64_t d = 0; d < hd; ++d) {
        const double err = std::fabs(out[d] - ref[d]);
        worst = std::max(worst, err);
        EXPECT_NEAR(out[d], ref[d], 1e-5 * (1 + std::fabs(ref[d]))) << hd << " " << n << " " << d;
      }
    }
  std::printf("worst |tiled - double| = %.3g\n", worst);
}

// ulps between a float and the exact value.
double UlpError(float got, double want) {
  if (want == 0) return got == 0 ? 0 : 1e9;
  int e;
  std::frexp(want, &e);  // want = m * 2^e, m in [0.5, 1)
  const double ulp = std::ldexp(1.0, std::max(e - 24, -149));
  return std::fabs(got - want) / ulp;
}

TEST(AttentionTiled, ExpF32WithinTwoUlp) {
  double worst = 0;
  float worst_x = 0;
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> ud(kExpF32Min, 0.0f);
  std::vector<float> xs = {0.0f,   -0.0f,  -1e-30f, -1e-7f,     -0.3465f, -0.3466f, -0.6931472f, -1.0f,
                           -10.0f, -50.0f, -87.0f,  kExpF32Min, 1.0f,     10.0f,    80.0f};
  for (int i = 0; i < 200000; ++i) xs.push_back(ud(rng));
  for (float x = -20.0f; x <= 0.0f; x += 1.0f / 1024) xs.push_back(x);
  for (float x : xs) {
    const double err = UlpError(ExpF32(x), std::exp(static_cast<double>(x)));
    if (err > worst) worst = err, worst_x = x;
  }
  std::printf("ExpF32 worst error %.3f ulp at x = %.9g\n", worst, worst_x);
  EXPECT_LE(worst, 2.0);
  EXPECT_EQ(ExpF32(-INFINITY), 0.0f);
  EXPECT_EQ(ExpF32(-88.0f), 0.0f);
  EXPECT_EQ(ExpF32(-1000.0f), 0.0f);
  EXPECT_EQ(ExpF32(0.0f), 1.0f);
}

}  // namespace
}  // namespace pg
