// The MLA kernels (kernels/mla_attention.h, indexer.h, topk.h, mla_rows.h)
// against the CPU's scalar references on an MLA block layout (latent rows of
// two layers, then one indexer layer's keys; blocks out of order):
//   MlaAttention  vs MlaAttend (model/mla_attention.h), dense and over the
//                 top-k list: the same summation orders, tolerance 1e-12
//                 normalised error (emulated: 0, the same bits);
//   IndexerScoresBatch vs IndexerScores (model/dsa_indexer.h), 1e-12;
//   TopKRows      vs TopKSelectScalar (model/topk_select.h) with tied scores,
//                 NaN, -0 / +0 and n <= k: the same positions;
//   MlaCosSin, MlaLatentRows, IndexerKeys, RopeHeads vs MlaCosSin, the
//   scalar RmsNorm, RopeNorm pairs and a double LayerNorm, with the cached
//   rows compared bit for bit after StoreRowF16 / StoreRowBF16.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <vector>

#include "backend/cpu/fp16.h"
#include "backend/cpu/kernel_impls.h"
#include "backend/cpu/rope_pairs.h"
#include "backend/cpu/vec_ops.h"
#include "gpu/gpu_test_util.h"
#include "gpu/kernels/indexer.h"
#include "gpu/kernels/mla_attention.h"
#include "gpu/kernels/mla_rows.h"
#include "gpu/kernels/topk.h"
#include "model/dsa_indexer.h"
#include "model/kv_pages.h"
#include "model/mla_attention.h"
#include "model/mla_layer.h"
#include "model/topk_select.h"

namespace pg::gpu {
namespace {

using namespace testing;  // NOLINT(build/namespaces): the GPU test helpers (gpu_test_util.h)

constexpr int kLora = 40, kRope = 16, kRow = kLora + kRope, kHeads = 4, kPage = 16, kIndexDim = 32, kIndexHeads = 3;
constexpr double kTol = 1e-12;

// Host MLA pages (2 layers, 1 indexer layer) of random rows and their device copy.
struct MlaArena {
  MlaArena(int64_t n_blocks, KvDtype dtype, uint32_t seed) {
    pages.layout = KvLayout{2, 1, kRow, kPage, dtype, AttentionKind::kMla, 1, kIndexDim};
    pages.block_bytes = pages.layout.block_bytes();
    const auto vals = RandomFloats(pages.block_bytes / 2 * n_blocks, seed);
    mem.resize(vals.size());
    for (size_t i = 0; i < vals.size(); ++i) mem[i] = dtype == KvDtype::kF16 ? F32ToF16(vals[i]) : F32ToBF16(vals[i]);
    pages.base = reinterpret_cast<uint8_t*>(mem.data());
    table.resize(n_blocks);
    std::iota(table.begin(), table.end(), 0);
    std::shuffle(table.begin(), table.end(), std::mt19937(seed));
    dev = std::make_unique<DeviceArray<uint16_t>>(mem);
    dpages.base = reinterpret_cast<uint8_t*>(dev->get());
    dpages.block_bytes = static_cast<int64_t>(pages.block_bytes);
    dpages.n_kv_heads = 1;
    dpages.head_dim = kRow;
    dpages.page_tokens = kPage;
    dpages.bf16 = dtype == KvDtype::kBF16;
    dpages.rows_per_layer = 1;
    dpages.n_layers = 2;
    dpages.index_dim = kIndexDim;
  }
  std::vector<uint16_t> mem;
  KvPages pages;
  std::vector<int32_t> table;
  std::unique_ptr<DeviceArray<uint16_t>> dev;
  DeviceKvPages dpages;
};

// Three rows of one sequence: key counts, and each row's top-k of random scores.
struct Rows {
  std::vector<int32_t> n_keys{70, 33, 9}, offsets{0, 0, 0};
  int64_t T() const { return static_cast<int64_t>(n_keys.size()); }
};

TEST(GpuMla, AttentionMatchesMlaAttendDenseAndSparse) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  for (KvDtype dtype : {KvDtype::kF16, KvDtype::kBF16}) {
    MlaArena ar(5, dtype, 11);
    const Rows rows;
    const int64_t T = rows.T(), K = 16;
    const auto q = RandomFloats(T * kHeads * kRow, 12);
    std::vector<int32_t> sel(T * K), sel_n(T);
    std::vector<int32_t> scratch(128);
    for (int64_t t = 0; t < T; ++t) {
      const auto sc = RandomFloats(rows.n_keys[t], 13 + t);
      sel_n[t] = static_cast<int32_t>(TopKSelectScalar(sc.data(), rows.n_keys[t], K, &sel[t * K], scratch.data()));
    }
    DeviceArray<float> dq(q), dout(T * kHeads * kLora);
    DeviceArray<int32_t> dtab(ar.table), doff(rows.offsets), dn(rows.n_keys), dsel(sel), dseln(sel_n);
    for (bool sparse : {false, true}) {
      SCOPED_TRACE(::testing::Message() << "sparse " << sparse << " bf16 " << (dtype == KvDtype::kBF16));
      const MlaAttentionArgs a{&ar.pages, ar.table.data(), 1, kLora, kRope, kHeads, 0.2f};
      std::vector<float> ref(T * kHeads * kLora), cpu_scratch(MlaAttendScratchFloats(a, 128));
      for (int64_t t = 0; t < T; ++t) {
        const bool list = sparse && rows.n_keys[t] > K;
        MlaAttend(a, &q[t * kHeads * kRow], list ? &sel[t * K] : nullptr, list ? sel_n[t] : rows.n_keys[t], nullptr,
                  &ref[t * kHeads * kLora], cpu_scratch.data());
      }
      MlaBatch b{dq.get(),
                 dout.get(),
                 T,
                 kHeads,
                 kLora,
                 kRope,
                 0.2f,
                 dtab.get(),
                 doff.get(),
                 dn.get(),
                 sparse ? dsel.get() : nullptr,
                 dseln.get(),
                 K};
      ForEachWarpSize([&] {
        PG_GPU_OK(MlaAttention(b, ar.dpages, 1, nullptr));
        EXPECT_LE(Nmse(dout.Download(), ref), kTol);
      });
    }
  }
}

TEST(GpuMla, IndexerScoresMatchTheCpu) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  MlaArena ar(6, KvDtype::kF16, 21);
  const Rows rows;
  const int64_t T = rows.T(), K = 16, ld = 80;
  const auto iq = RandomFloats(T * kIndexHeads * kIndexDim, 22), w = RandomFloats(T * kIndexHeads, 23, 0.1f, 1.0f);
  std::vector<float> ref(T * ld, 0.0f), key(kIndexerKeyGroup * kIndexDim);
  for (int64_t t = 0; t < T; ++t) {
    if (rows.n_keys[t] <= K) continue;
    IndexerArgs a{&ar.pages, ar.table.data(), 0, kIndexHeads, kIndexDim};
    IndexerScores(a, &iq[t * kIndexHeads * kIndexDim], &w[t * kIndexHeads], rows.n_keys[t], &ref[t * ld], key.data());
  }
  DeviceArray<float> diq(iq), dw(w), dscores(std::vector<float>(T * ld, 0.0f));
  DeviceArray<int32_t> dtab(ar.table), doff(rows.offsets), dn(rows.n_keys);
  IndexerBatch b{diq.get(), dw.get(),   T,          kIndexHeads, kIndexDim,     K,
                 0,         dtab.get(), doff.get(), dn.get(),    dscores.get(), ld};
  ForEachWarpSize([&] {
    PG_GPU_OK(IndexerScoresBatch(b, ar.dpages, nullptr));
    EXPECT_LE(Nmse(dscores.Download(), ref), kTol);
  });
}

TEST(GpuMla, TopKMatchesTopKSelectWithTiesNanAndSignedZeros) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  const std::vector<int32_t> n_keys{5, 16, 17, 40, 300, 1000};
  const int64_t T = static_cast<int64_t>(n_keys.size()), ld = 1000;
  for (int64_t k : {16, 64}) {
    std::vector<float> scores(T * ld, 0.0f);
    std::mt19937 rng(static_cast<uint32_t>(k));
    std::uniform_int_distribution<int> coarse(-6, 6), kind(0, 19);
    for (float& s : scores) {  // coarse values: many ties; some NaN, -0, -inf
      const int c = kind(rng);
      s = c == 0 ? NAN : c == 1 ? -0.0f : c == 2 ? -INFINITY : static_cast<float>(coarse(rng)) * 0.5f;
    }
    std::vector<int32_t> ref(T * k, -1), ref_n(T), scratch(ld);
    for (int64_t t = 0; t < T; ++t)
      ref_n[t] = static_cast<int32_t>(TopKSelectScalar(&scores[t * ld], n_keys[t], k, &ref[t * k], scratch.data()));
    DeviceArray<float> ds(scores);
    DeviceArray<int32_t> dn(n_keys), dsel(std::vector<int32_t>(T * k, -1)), dseln(T);
    ForEachWarpSize([&] {
      PG_GPU_OK(TopKRows(ds.get(), ld, dn.get(), T, k, dsel.get(), dseln.get(), nullptr));
      EXPECT_EQ(dseln.Download(), ref_n);
      const auto got = dsel.Download();
      for (int64_t t = 0; t < T; ++t)
        for (int64_t j = 0; j < ref_n[t]; ++j) ASSERT_EQ(got[t * k + j], ref[t * k + j]) << "row " << t << " j " << j;
    });
  }
}

TEST(GpuMla, RowKernelsMatchTheCpuStages) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  MlaConfig m;
  m.rope = kRope;
  m.rope_mag = 1.2;
  for (int k = 0; k < kRope / 2; ++k) m.inv_freq.push_back(std::pow(10000.0, -2.0 * k / kRope) * (k < 3 ? 0.025 : 1));
  const std::vector<int32_t> pos{0, 7, 31, 2047}, slots{3, 20, -1, 45};  // -1: not stored
  const int64_t T = 4, H = 3, KH = 24 + kRope, R2 = kRope / 2;
  for (KvDtype dtype : {KvDtype::kF16, KvDtype::kBF16}) {
    MlaArena ar(4, dtype, 31);
    std::vector<float> cs(T * R2), sn(T * R2);
    for (int64_t t = 0; t < T; ++t) MlaCosSin(m, pos[t], &cs[t * R2], &sn[t * R2]);
    auto kv = RandomFloats(T * kRow, 32, -3, 3), ik = RandomFloats(T * kIndexDim, 33, -2, 2);
    auto q = RandomFloats(T * H * KH, 34), iw = RandomFloats(T * kIndexHeads, 35);
    const auto norm_w = RandomFloats(kLora, 36, 0.5f, 1.5f), lw = RandomFloats(kIndexDim, 37),
               lb = RandomFloats(kIndexDim, 38);
    DeviceArray<float> dkv(kv), dik(ik), dq(q), diw(iw), dnw(norm_w), dlw(lw), dlb(lb), dcs(T * R2), dsn(T * R2);
    DeviceArray<float> dqabs(std::vector<float>(T * H * kRow, 0.0f));
    DeviceArray<double> dfreq(m.inv_freq);
    DeviceArray<int32_t> dpos(pos), dslots(slots);
    const RopeTable rt{dcs.get(), dsn.get(), kRope};
    PG_GPU_OK(MlaCosSin(dfreq.get(), m.rope_mag, kRope, dpos.get(), T, dcs.get(), dsn.get(), nullptr));
    EXPECT_EQ(dcs.Download(), cs);
    EXPECT_EQ(dsn.Download(), sn);
    PG_GPU_OK(MlaLatentRows(dkv.get(), dnw.get(), 1e-6f, T, kLora, rt, dslots.get(), ar.dpages, 1, nullptr));
    PG_GPU_OK(IndexerKeys(dik.get(), dlw.get(), dlb.get(), T, kIndexDim, rt, dslots.get(), ar.dpages, 0, diw.get(),
                          kIndexHeads, 0.125f, nullptr));
    PG_GPU_OK(RopeHeads(dq.get(), T, H, KH, 24, rt, dqabs.get(), kRow, kLora, nullptr));
    std::vector<uint16_t> row(kRow);
    for (int64_t t = 0; t < T; ++t) {
      float* r = &kv[t * kRow];
      scalar::RmsNorm(r, norm_w.data(), r, kLora, 1e-6f);
      RopeNormPairs(r + kLora, 0, R2, &cs[t * R2], &sn[t * R2]);
      float* x = &ik[t * kIndexDim];
      LayerNormNoEps(x, kIndexDim);
      for (int64_t d = 0; d < kIndexDim; ++d) x[d] = x[d] * lw[d] + lb[d];
      RopeNormPairs(x, 0, R2, &cs[t * R2], &sn[t * R2]);
      for (int64_t i = 0; i < kIndexHeads; ++i) iw[t * kIndexHeads + i] *= 0.125f;
      for (int64_t h = 0; h < H; ++h) RopeNormPairs(&q[(t * H + h) * KH + 24], 0, R2, &cs[t * R2], &sn[t * R2]);
    }
    EXPECT_LE(Nmse(dkv.Download(), kv), kTol);
    EXPECT_LE(Nmse(dik.Download(), ik), kTol);
    EXPECT_EQ(diw.Download(), iw);
    EXPECT_EQ(dq.Download(), q);
    const auto qabs = dqabs.Download();
    for (int64_t t = 0; t < T; ++t)
      for (int64_t h = 0; h < H; ++h)
        for (int64_t d = 0; d < kRope; ++d)
          EXPECT_EQ(qabs[(t * H + h) * kRow + kLora + d], q[(t * H + h) * KH + 24 + d]);
    // The cached rows: the device's bytes equal the CPU's store of its rows.
    const auto mem = ar.dev->Download();
    KvPages dev_pages = ar.pages;
    dev_pages.base = reinterpret_cast<uint8_t*>(const_cast<uint16_t*>(mem.data()));
    const auto dkv_host = dkv.Download(), dik_host = dik.Download();
    for (int64_t t = 0; t < T; ++t) {
      if (slots[t] < 0) continue;
      const int32_t block = slots[t] / kPage, s = slots[t] % kPage;
      auto store = [&](const float* src, int64_t n) {
        std::vector<uint16_t> out(n);
        dtype == KvDtype::kF16 ? StoreRowF16(src, out.data(), n) : StoreRowBF16(src, out.data(), n);
        return out;
      };
      const uint16_t* lat = dev_pages.Row(block, 1, 0, s);
      EXPECT_EQ(std::vector<uint16_t>(lat, lat + kRow), store(&dkv_host[t * kRow], kRow));
      const uint16_t* key = dev_pages.IndexRow(block, 0, s);
      EXPECT_EQ(std::vector<uint16_t>(key, key + kIndexDim), store(&dik_host[t * kIndexDim], kIndexDim));
    }
  }
}

}  // namespace
}  // namespace pg::gpu
