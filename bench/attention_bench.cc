// attention_bench: single-thread time of the kTiledF32 attention kernels
// (AttendGroupScalar / Avx2 / Avx512) on one GQA group over f16 KV pages.
//
//   attention_bench [--head-dim 64] [--keys 3000] [--queries 1,2,4,16,64] [--page 16] [--seconds 1]
//                   [--cold MIB] [--layers 1] [--kv-heads 1]
//
// For each group size it times one AttendGroup call whose queries end at
// --keys (query i attends to keys - i / 4 keys: rows of a causal prefill
// with four heads per KV head, as the model groups them; one query per row
// when the group has fewer than four) and prints microseconds per call and
// nanoseconds per (query, key) pair attended. Each ISA the host supports is
// run; PROSGROW_ISA does not apply (the kernels are called directly).
// --cold MIB: before each timed call (untimed) read a MIB-mebibyte buffer,
// so the call finds its K/V in DRAM, as a decode step does after the step's
// weights have streamed through the caches. --layers / --kv-heads: the KV
// blocks hold that many layers and kv heads (the kernel reads layer 0, head
// 0), so its rows sit in short runs as in a model's cache (the 30b-a3b-mini
// shape: 8 and 2).
// Prints figures only; it asserts nothing.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "backend/cpu/cpu_features.h"
#include "backend/cpu/fp16.h"
#include "base/large_alloc.h"
#include "model/attention.h"
#include "model/kv_pages.h"

namespace {

using pg::AttentionArgs;
using pg::AttentionQuery;
using GroupFn = void (*)(const AttentionArgs&, std::span<const AttentionQuery>, float*);

std::vector<int64_t> ParseList(const std::string& s) {
  std::vector<int64_t> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, ',')) out.push_back(std::atoll(item.c_str()));
  return out;
}

// Random f16 K/V rows of layer 0, kv head 0 in scattered pages of
// n_layers x n_kv_heads.
struct Cache {
  Cache(int64_t head_dim, int64_t n_keys, int64_t page, int64_t n_layers, int64_t n_kv_heads) {
    kv.layout = pg::KvLayout{static_cast<int>(n_layers), static_cast<int>(n_kv_heads), static_cast<int>(head_dim),
                             static_cast<int>(page), pg::KvDtype::kF16};
    kv.block_bytes = kv.layout.block_bytes();
    const int64_t n_blocks = (n_keys + page - 1) / page;
    // Huge pages where the kernel grants them, as the server's KV arena (kv/media/block_arena.cc).
    mem.reset(static_cast<uint8_t*>(pg::AllocateLarge(kv.block_bytes * static_cast<size_t>(n_blocks + 1))));
    if (!mem) {
      std::fprintf(stderr, "attention_bench: out of memory\n");
      std::exit(1);
    }
    kv.base = mem.get();
    for (int64_t b = 0; b < n_blocks; ++b) table.push_back(static_cast<int32_t>((b * 5 + 1) % (n_blocks + 1)));
    std::mt19937 rng(1);
    std::normal_distribution<float> nd(0.0f, 1.0f);
    for (int64_t j = 0; j < n_keys; ++j)
      for (int kvv = 0; kvv < 2; ++kvv) {
        uint16_t* row = kv.Row(table[static_cast<size_t>(j / page)], 0, kvv, j % page);
        for (int64_t d = 0; d < head_dim; ++d) row[d] = pg::F32ToF16(nd(rng));
      }
  }
  pg::KvPages kv;
  pg::LargeBuffer<uint8_t> mem;
  std::vector<int32_t> table;
};

// Reads every cache line of `buf` (pushing other data out of the caches).
uint64_t Stream(const std::vector<uint64_t>& buf) {
  uint64_t sum = 0;
  for (size_t i = 0; i < buf.size(); i += 8) sum += buf[i];
  return sum;
}

// Seconds per call: back-to-back calls for `seconds`, or with `flush` not
// empty, calls timed one by one after streaming it (for `seconds` of calls).
double TimeCall(GroupFn fn, const AttentionArgs& a, std::span<const AttentionQuery> qs, float* scratch, double seconds,
                const std::vector<uint64_t>& flush) {
  using Clock = std::chrono::steady_clock;
  fn(a, qs, scratch);  // warm-up
  int64_t calls = 0;
  double timed = 0;
  volatile uint64_t sink = 0;
  const auto t0 = Clock::now();
  do {
    if (!flush.empty()) sink = sink + Stream(flush);
    const auto c0 = Clock::now();
    fn(a, qs, scratch);
    timed += std::chrono::duration<double>(Clock::now() - c0).count();
    ++calls;
  } while (std::chrono::duration<double>(Clock::now() - t0).count() < seconds);
  return timed / static_cast<double>(calls);
}

}  // namespace

int main(int argc, char** argv) {
  int64_t head_dim = 64, n_keys = 3000, page = 16;
  double seconds = 1.0;
  int64_t cold_mib = 0, n_layers = 1, n_kv_heads = 1;
  std::vector<int64_t> group_sizes = {1, 2, 4, 16, 64};
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    const bool has_value = i + 1 < argc;
    if (arg == "--head-dim" && has_value)
      head_dim = std::atoll(argv[++i]);
    else if (arg == "--keys" && has_value)
      n_keys = std::atoll(argv[++i]);
    else if (arg == "--queries" && has_value)
      group_sizes = ParseList(argv[++i]);
    else if (arg == "--page" && has_value)
      page = std::atoll(argv[++i]);
    else if (arg == "--seconds" && has_value)
      seconds = std::atof(argv[++i]);
    else if (arg == "--cold" && has_value)
      cold_mib = std::atoll(argv[++i]);
    else if (arg == "--layers" && has_value)
      n_layers = std::atoll(argv[++i]);
    else if (arg == "--kv-heads" && has_value)
      n_kv_heads = std::atoll(argv[++i]);
    else {
      std::fprintf(stderr, "attention_bench: unknown or incomplete argument '%s'\n", arg.c_str());
      return 2;
    }
  }
  if (head_dim <= 0 || head_dim > 512 || head_dim % 8 != 0 || n_keys < 1 || page < 1 || cold_mib < 0 ||
      cold_mib > 65536 || n_layers < 1 || n_layers > 256 || n_kv_heads < 1 || n_kv_heads > 64) {
    std::fprintf(stderr,
                 "attention_bench: need 0 < head-dim <= 512 (a multiple of 8), keys >= 1, page >= 1, "
                 "0 <= cold <= 65536, 1 <= layers <= 256, 1 <= kv-heads <= 64\n");
    return 2;
  }
  const std::vector<uint64_t> flush(static_cast<size_t>(cold_mib) << 17, 1);
  Cache cache(head_dim, n_keys, page, n_layers, n_kv_heads);
  AttentionArgs a;
  a.kv = &cache.kv;
  a.block_table = cache.table.data();
  a.head_dim = head_dim;
  a.scale = 1.0f / std::sqrt(static_cast<float>(head_dim));
  struct Impl {
    const char* name;
    GroupFn fn;
    pg::IsaLevel level;
  };
  const Impl impls[] = {{"scalar", pg::AttendGroupScalar, pg::IsaLevel::kScalar},
                        {"avx2", pg::AttendGroupAvx2, pg::IsaLevel::kAvx2},
                        {"avx512", pg::AttendGroupAvx512, pg::IsaLevel::kAvx512}};
  std::printf("head_dim %lld, keys %lld, page %lld, 1 thread%s\n", static_cast<long long>(head_dim),
              static_cast<long long>(n_keys), static_cast<long long>(page),
              cold_mib > 0 ? ", K/V from DRAM (--cold)" : "");
  std::printf("%-8s %8s %12s %14s\n", "isa", "queries", "us/call", "ns/(query*key)");
  std::mt19937 rng(2);
  std::normal_distribution<float> nd(0.0f, 1.0f);
  for (int64_t nq : group_sizes) {
    if (nq < 1) continue;
    std::vector<float> q(static_cast<size_t>(nq * head_dim)), out(q.size());
    for (float& x : q) x = nd(rng);
    std::vector<AttentionQuery> qs;
    int64_t pairs = 0;
    for (int64_t i = 0; i < nq; ++i) {
      const int64_t len = std::max<int64_t>(1, n_keys - (nq >= 4 ? i / 4 : i));
      qs.push_back({q.data() + i * head_dim, out.data() + i * head_dim, len});
      pairs += len;
    }
    std::vector<float> scratch(pg::AttendGroupScratchFloats(head_dim, nq, n_keys));
    for (const Impl& impl : impls) {
      if (!pg::HostSupports(impl.level)) continue;
      const double t = TimeCall(impl.fn, a, qs, scratch.data(), seconds, flush);
      std::printf("%-8s %8lld %12.2f %14.3f\n", impl.name, static_cast<long long>(nq), t * 1e6,
                  t * 1e9 / static_cast<double>(pairs));
    }
  }
  return 0;
}
