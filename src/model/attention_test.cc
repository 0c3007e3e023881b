#include "model/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "backend/cpu/cpu_features.h"
#include "backend/cpu/fp16.h"
#include "model/test_attention_fixture.h"

namespace pg {
namespace {

struct Fixture : AttentionFixture {
  Fixture(int64_t head_dim, int64_t n_kv_heads, int64_t n_keys, KvDtype type, uint32_t seed)
      : AttentionFixture(head_dim, n_kv_heads, n_keys, /*page_tokens=*/16, type, seed, /*sd=*/2.0f, /*n_q=*/1) {}
};

// Softmax-weighted V in double precision.
std::vector<double> Reference(const Fixture& f) {
  const auto& a = f.args;
  std::vector<double> s(static_cast<size_t>(a.n_keys)), out(static_cast<size_t>(a.head_dim), 0.0);
  auto val = [&](const uint16_t* p, int64_t d) {
    return f.kv.dtype() == KvDtype::kF16 ? F16ToF32(p[d]) : BF16ToF32(p[d]);
  };
  double mx = -1e300;
  for (int64_t j = 0; j < a.n_keys; ++j) {
    const uint16_t* k = f.kv.Row(a.block_table[j / 16], a.layer, 0, j % 16) + a.kv_head * a.head_dim;
    double dot = 0;
    for (int64_t d = 0; d < a.head_dim; ++d) dot += val(k, d) * f.q[d];
    s[j] = dot * a.scale;
    mx = std::max(mx, s[j]);
  }
  double z = 0;
  for (auto& x : s) z += (x = std::exp(x - mx));
  for (int64_t j = 0; j < a.n_keys; ++j) {
    const uint16_t* v = f.kv.Row(a.block_table[j / 16], a.layer, 1, j % 16) + a.kv_head * a.head_dim;
    for (int64_t d = 0; d < a.head_dim; ++d) out[d] += s[j] / z * val(v, d);
  }
  return out;
}

TEST(Attention, ScalarMatchesDoubleReference) {
  for (KvDtype t : {KvDtype::kF16, KvDtype::kBF16})
    for (int64_t hd : {16, 64, 72})
      for (int64_t n : {1, 5, 33, 300}) {
        Fixture f(hd, 2, n, t, static_cast<uint32_t>(hd * 1000 + n));
        std::vector<float> out(static_cast<size_t>(hd)), scratch(static_cast<size_t>(n));
        AttendOneScalar(f.args, f.q.data(), out.data(), scratch.data());
        std::vector<double> ref = Reference(f);
        for (int64_t d = 0; d < hd; ++d) EXPECT_NEAR(out[d], ref[d], 2e-2 * (1 + std::fabs(ref[d]))) << hd << " " << n;
      }
}

TEST(Attention, Avx2IsBitIdenticalToScalar) {
  if (!HostSupports(IsaLevel::kAvx2)) GTEST_SKIP() << "no AVX2";
  for (int64_t hd : {8, 16, 64, 128, 40})
    for (int64_t n : {1, 2, 17, 100, 513}) {
      Fixture f(hd, 3, n, KvDtype::kF16, static_cast<uint32_t>(hd * 7 + n));
      std::vector<float> a(static_cast<size_t>(hd)), b(static_cast<size_t>(hd)), scratch(static_cast<size_t>(n));
      AttendOneScalar(f.args, f.q.data(), a.data(), scratch.data());
      AttendOneAvx2(f.args, f.q.data(), b.data(), scratch.data());
      ASSERT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float))) << "hd " << hd << " n " << n;
    }
}

}  // namespace
}  // namespace pg
