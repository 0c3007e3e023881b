// Paged attention and K/V page writes (kernels/attention.h, kv_write.h)
// against the CPU: AttendGroupScalar (model/attention.h, the f32 tiled
// online softmax) for f16 KV, AttendOne's bf16 path for bf16 KV, and
// StoreRowF16 / StoreRowBF16 for the page writes (bit-exact). Block tables are
// shuffled (pages out of order). Tolerance: normalised error <= 1e-9 (f32,
// another summation and exp order; measured ~1e-14).
#include "gpu/kernels/attention.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <vector>

#include "backend/cpu/fp16.h"
#include "backend/cpu/test_util.h"
#include "backend/cpu/vec_ops.h"
#include "gpu/gpu_test_util.h"
#include "gpu/kernels/kv_write.h"
#include "model/attention.h"
#include "model/kv_pages.h"

namespace pg::gpu {
namespace {

using namespace testing;  // NOLINT(build/namespaces): the GPU test helpers (gpu_test_util.h)

constexpr double kTol = 1e-9;

// A host arena of random K/V and its device copy, same layout.
struct Arena {
  Arena(int n_kv_heads, int head_dim, int64_t n_blocks, KvDtype dtype) {
    pages.layout = KvLayout{2, n_kv_heads, head_dim, 16, dtype};
    pages.block_bytes = pages.layout.block_bytes();
    const auto vals = RandomFloats(pages.block_bytes / 2 * n_blocks, 99);
    mem.resize(vals.size());
    for (size_t i = 0; i < vals.size(); ++i) mem[i] = dtype == KvDtype::kF16 ? F32ToF16(vals[i]) : F32ToBF16(vals[i]);
    pages.base = reinterpret_cast<uint8_t*>(mem.data());
    dev = std::make_unique<DeviceArray<uint16_t>>(mem);
    dpages = DeviceKvPages{reinterpret_cast<uint8_t*>(dev->get()),
                           static_cast<int64_t>(pages.block_bytes),
                           n_kv_heads,
                           head_dim,
                           16,
                           dtype == KvDtype::kBF16};
  }
  std::vector<uint16_t> mem;
  KvPages pages;
  std::unique_ptr<DeviceArray<uint16_t>> dev;
  DeviceKvPages dpages;
};

std::vector<int32_t> ShuffledTable(int64_t n, uint32_t seed) {
  std::vector<int32_t> t(n);
  std::iota(t.begin(), t.end(), 0);
  std::shuffle(t.begin(), t.end(), std::mt19937(seed));
  return t;
}

// Rows of one sequence (table) with their key counts; returns the CPU result.
std::vector<float> CpuAttention(const Arena& ar, const std::vector<int32_t>& table, const std::vector<float>& q,
                                const std::vector<int32_t>& n_keys, int64_t n_heads, bool round_q) {
  const int64_t hd = ar.pages.layout.head_dim, n_kv = ar.pages.layout.n_kv_heads, G = n_heads / n_kv;
  std::vector<float> out(q.size());
  const int64_t max_keys = *std::max_element(n_keys.begin(), n_keys.end());
  std::vector<float> scratch(AttendGroupScratchFloats(hd, G, max_keys) + max_keys);
  for (size_t r = 0; r < n_keys.size(); ++r) {
    for (int64_t h = 0; h < n_kv; ++h) {
      AttentionArgs a{&ar.pages, table.data(), 1, h, hd, n_keys[r], 1.0f / std::sqrt(float(hd)), round_q};
      std::vector<AttentionQuery> qs;
      for (int64_t g = 0; g < G; ++g) {
        const size_t off = (r * n_heads + h * G + g) * hd;
        qs.push_back({q.data() + off, out.data() + off, n_keys[r]});
      }
      if (ar.pages.dtype() == KvDtype::kF16) {
        AttendGroupScalar(a, qs, scratch.data());
      } else {
        for (const auto& one : qs) AttendOneScalar(a, one.q, one.out, scratch.data());
      }
    }
  }
  return out;
}

void CheckAttention(int n_kv, int hd, int G, KvDtype dtype, const std::vector<int32_t>& n_keys, bool both_widths) {
  SCOPED_TRACE(::testing::Message() << "kv heads " << n_kv << " head_dim " << hd << " GQA " << G);
  const int64_t max_keys = *std::max_element(n_keys.begin(), n_keys.end());
  const int64_t n_blocks = (max_keys + 15) / 16 + 3;
  Arena ar(n_kv, hd, n_blocks, dtype);
  const auto table = ShuffledTable(n_blocks, 5);
  const int64_t n_heads = int64_t(n_kv) * G, rows = static_cast<int64_t>(n_keys.size());
  const auto q = RandomFloats(rows * n_heads * hd, 6, -2, 2);
  const bool round_q = dtype == KvDtype::kF16;
  const auto ref = CpuAttention(ar, table, q, n_keys, n_heads, round_q);
  DeviceArray<float> dq(q), dout(q.size());
  DeviceArray<int32_t> dtable(table), doff(std::vector<int32_t>(rows, 0)), dkeys(n_keys);
  const AttentionBatch b{
      dq.get(), dout.get(), rows, n_heads, dtable.get(), doff.get(), dkeys.get(), 1.0f / std::sqrt(float(hd)), round_q};
  auto run = [&] {
    PG_GPU_OK(PagedAttention(b, ar.dpages, 1, nullptr));
    EXPECT_LE(Nmse(dout.Download(), ref), kTol);
  };
  if (both_widths) {
    ForEachWarpSize(run);
  } else {
    run();
  }
}

TEST(GpuAttention, DecodeAndPrefillRowsMatchCpuForHeadDimsAndGqa) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  const std::vector<int32_t> decode = {1}, prefill = {37, 38, 39, 40, 41}, mixed = {16, 1, 100, 33};
  CheckAttention(2, 64, 1, KvDtype::kF16, decode, true);  // GQA 1 (multi-head)
  CheckAttention(2, 64, 1, KvDtype::kF16, prefill, true);
  CheckAttention(2, 128, 4, KvDtype::kF16, mixed, true);    // GQA 4
  CheckAttention(1, 128, 8, KvDtype::kF16, prefill, true);  // GQA 8
  CheckAttention(2, 64, 4, KvDtype::kBF16, mixed, true);    // bf16 KV
}

TEST(GpuAttention, EightThousandTokenContext) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  CheckAttention(1, 128, 8, KvDtype::kF16, {8192}, false);
}

TEST(GpuAttention, RowsOfDifferentSequencesShareALaunch) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  const int hd = 64, n_kv = 2, G = 4;
  Arena ar(n_kv, hd, 12, KvDtype::kF16);
  // Sequence A owns blocks {7, 2, 9, 0}, B owns {5, 11, 1}.
  const std::vector<int32_t> ta = {7, 2, 9, 0}, tb = {5, 11, 1};
  const std::vector<int32_t> ka = {50, 51}, kb = {40};
  const int64_t n_heads = n_kv * G;
  const auto qa = RandomFloats(2 * n_heads * hd, 1), qb = RandomFloats(n_heads * hd, 2);
  auto ref = CpuAttention(ar, ta, qa, ka, n_heads, true);
  const auto ref_b = CpuAttention(ar, tb, qb, kb, n_heads, true);
  ref.insert(ref.end(), ref_b.begin(), ref_b.end());
  std::vector<float> q = qa;
  q.insert(q.end(), qb.begin(), qb.end());
  std::vector<int32_t> tables = ta;
  tables.insert(tables.end(), tb.begin(), tb.end());
  DeviceArray<float> dq(q), dout(q.size());
  DeviceArray<int32_t> dt(tables), doff(std::vector<int32_t>{0, 0, 4}), dk(std::vector<int32_t>{50, 51, 40});
  const AttentionBatch b{dq.get(), dout.get(), 3, n_heads, dt.get(), doff.get(), dk.get(), 1.0f / 8.0f, true};
  PG_GPU_OK(PagedAttention(b, ar.dpages, 1, nullptr));
  EXPECT_LE(Nmse(dout.Download(), ref), kTol);
}

TEST(GpuKvWrite, RowsLandInTheirPagesBitExact) {
  PG_GPU_SKIP_WITHOUT_DEVICE();
  for (KvDtype dtype : {KvDtype::kF16, KvDtype::kBF16}) {
    Arena ar(2, 64, 6, dtype);
    const int64_t kv_dim = 128, n = 5;
    const auto k = RandomFloats(n * kv_dim, 3), v = RandomFloats(n * kv_dim, 4);
    // Tokens at positions 14..18 of a sequence with table {4, 1}: slots 14, 15 of
    // block 4, then 0..2 of block 1; the third token is skipped (-1).
    const std::vector<int32_t> mapping = {4 * 16 + 14, 4 * 16 + 15, -1, 1 * 16 + 1, 1 * 16 + 2};
    DeviceArray<float> dk(k), dv(v);
    DeviceArray<int32_t> dm(mapping);
    PG_GPU_OK(WriteKvRows(dk.get(), dv.get(), n, dm.get(), ar.dpages, 1, nullptr));
    std::vector<uint16_t> expect = ar.mem;
    KvPages host = ar.pages;
    host.base = reinterpret_cast<uint8_t*>(expect.data());
    for (int64_t t = 0; t < n; ++t) {
      if (mapping[t] < 0) continue;
      const int32_t blk = mapping[t] / 16, slot = mapping[t] % 16;
      for (int kv = 0; kv < 2; ++kv) {
        const float* src = (kv == 0 ? k.data() : v.data()) + t * kv_dim;
        uint16_t* dst = host.Row(blk, 1, kv, slot);
        if (dtype == KvDtype::kF16) {
          StoreRowF16(src, dst, kv_dim);
        } else {
          StoreRowBF16(src, dst, kv_dim);
        }
      }
    }
    EXPECT_EQ(ar.dev->Download(), expect);
  }
}

}  // namespace
}  // namespace pg::gpu
