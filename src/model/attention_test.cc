#include "model/attention.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <vector>

#include "backend/cpu/cpu_features.h"
#include "backend/cpu/fp16.h"

namespace pg {
namespace {

struct Fixture {
  Fixture(int64_t head_dim, int64_t n_kv_heads, int64_t n_keys, KvElemType type, uint32_t seed) {
    kv.page_tokens = 16;
    kv.kv_dim = head_dim * n_kv_heads;
    kv.dtype = type;
    kv.block_bytes = KvPages::BlockBytes(2, kv.kv_dim, kv.page_tokens);
    int64_t n_blocks = (n_keys + 15) / 16;
    mem.resize(kv.block_bytes * static_cast<size_t>(n_blocks + 3));
    kv.base = mem.data();
    // A scattered block table, as the paged cache produces.
    for (int64_t b = 0; b < n_blocks; ++b) table.push_back(static_cast<int32_t>((b * 7 + 2) % (n_blocks + 3)));
    std::mt19937 rng(seed);
    std::normal_distribution<float> nd(0.0f, 2.0f);
    for (int64_t j = 0; j < n_keys; ++j)
      for (int kvv = 0; kvv < 2; ++kvv) {
        uint16_t* row = kv.Row(table[j / 16], 1, kvv, j % 16);
        for (int64_t d = 0; d < kv.kv_dim; ++d) row[d] = type == KvElemType::kF16 ? F32ToF16(nd(rng)) : F32ToBF16(nd(rng));
      }
    q.resize(static_cast<size_t>(head_dim));
    for (auto& x : q) x = nd(rng);
    args.kv = &kv;
    args.block_table = table.data();
    args.layer = 1;
    args.kv_head = n_kv_heads - 1;
    args.head_dim = head_dim;
    args.n_keys = n_keys;
    args.scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  }
  KvPages kv;
  std::vector<uint8_t> mem;
  std::vector<int32_t> table;
  std::vector<float> q;
  AttentionArgs args;
};

// Softmax-weighted V in double precision.
std::vector<double> Reference(const Fixture& f) {
  const auto& a = f.args;
  std::vector<double> s(static_cast<size_t>(a.n_keys)), out(static_cast<size_t>(a.head_dim), 0.0);
  auto val = [&](const uint16_t* p, int64_t d) {
    return f.kv.dtype == KvElemType::kF16 ? F16ToF32(p[d]) : BF16ToF32(p[d]);
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
  for (KvElemType t : {KvElemType::kF16, KvElemType::kBF16})
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
      Fixture f(hd, 3, n, KvElemType::kF16, static_cast<uint32_t>(hd * 7 + n));
      std::vector<float> a(static_cast<size_t>(hd)), b(static_cast<size_t>(hd)), scratch(static_cast<size_t>(n));
      AttendOneScalar(f.args, f.q.data(), a.data(), scratch.data());
      AttendOneAvx2(f.args, f.q.data(), b.data(), scratch.data());
      ASSERT_EQ(0, std::memcmp(a.data(), b.data(), a.size() * sizeof(float))) << "hd " << hd << " n " << n;
    }
}

}  // namespace
}  // namespace pg
