// kv_whatif_bench: checks the KV cache's what-if estimate (docs/kv-cache.md,
// "What if a tier were bigger"). It replays a kv-cache-tester trace workload
// through KvCacheManager twice, with the same code the server runs but no
// model (the "forward pass" only commits each computed block):
//   1. the base tiers: prints the measured hit ratio and the ghost's estimate
//      for host + 1, 2, 4 GiB;
//   2. host + EXTRA (default 1 GiB): prints the measured hit ratio;
// and exits 1 when estimate and measurement differ by more than --max-pp
// percentage points (the bar: 5).
//
// usage: kv_whatif_bench --trace DIR_OR_FILE [--device-mem 384MiB] [--host-mem 256MiB]
//          [--extra 1GiB] [--layers 28 --kv-heads 2 --head-dim 128 --page 16]
//          [--concurrency 4] [--length-scale 0.25] [--passes 1] [--eviction lru|cost] [--max-pp 5]
// The default layout is Qwen2.5-1.5B's KV (28 KiB per token, 448 KiB blocks).
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <string>
#include <vector>

#include "base/clock.h"
#include "base/units.h"
#include "bench/token_space.h"
#include "bench/workload.h"
#include "kv/kv_cache_manager.h"

namespace pg {
namespace {

struct Args {
  std::string trace;
  std::string device = "384MiB", host = "256MiB", extra = "1GiB";
  int layers = 28, kv_heads = 2, head_dim = 128, page = 16;
  int concurrency = 4, passes = 1;
  double length_scale = 0.25, max_pp = 5;
  std::string eviction = "lru";
};

struct Replay {
  CacheCounters counters;
  int64_t requests = 0, skipped = 0;
  double wall_s = 0;
};

// One request: match, classify, allocate, wait for loads, commit the
// computed full blocks, free. False when it cannot fit the device tier.
bool Serve(KvCacheManager& kv, SeqId id, const std::vector<int32_t>& prompt) {
  PrefixMatch m = kv.Match(prompt, {});
  kv.ExplainMisses(&m, prompt);
  if (!kv.CanAllocate(kv.BlocksNeeded(m, int64_t(prompt.size())))) return false;
  std::vector<BlockId> table;
  if (!kv.AllocateSequence(id, std::move(m), int64_t(prompt.size()), &table).ok()) return false;
  while (!kv.PromotionReady(id, &table)) kv.WaitIdle();
  const size_t page = size_t(kv.page_tokens());
  for (size_t b = size_t(kv.CachedTokens(id)) / page; (b + 1) * page <= prompt.size(); ++b)
    kv.CommitFullBlock(id, int(b), std::span<const int32_t>(prompt).subspan(b * page, page));
  kv.FreeSequence(id);
  return true;
}

// Closed loop without time: `concurrency` root sessions in flight, one
// request of each in turn; a sub-agent joins the rotation when spawned.
Replay Run(const KvCacheConfig& cfg, const bench::Workload& w, const Args& a) {
  Replay r;
  auto made = KvCacheManager::Create(cfg);
  if (!made.ok()) {
    std::fprintf(stderr, "kv_whatif_bench: %s\n", made.status().ToString().c_str());
    std::exit(2);
  }
  KvCacheManager& kv = **made;
  struct Active {
    bench::SessionScript script;
    size_t next = 0;
  };
  std::deque<Active> pool;
  int64_t k = 0;
  const int64_t roots = w.SessionsPerPass() * a.passes;
  const double t0 = NowSeconds();
  SeqId id = 0;
  while (!pool.empty() || k < roots) {
    while (int64_t(pool.size()) < a.concurrency && k < roots) pool.push_back({w.MakeSession(k++), 0});
    Active s = std::move(pool.front());
    pool.pop_front();
    if (s.next >= s.script.events.size()) continue;
    const bench::SessionEvent& ev = s.script.events[s.next++];
    if (ev.kind == bench::SessionEvent::Kind::kSpawn) {
      pool.push_back({s.script.children[size_t(ev.child)], 0});
    } else {
      ++r.requests;
      if (!Serve(kv, ++id, ev.prompt)) ++r.skipped;
    }
    if (s.next < s.script.events.size()) pool.push_back(std::move(s));
  }
  r.wall_s = NowSeconds() - t0;
  r.counters = kv.counters();
  return r;
}

int Main(const Args& a) {
  auto dev = ParseByteSize(a.device), host = ParseByteSize(a.host), extra = ParseByteSize(a.extra);
  if (!dev.ok() || !host.ok() || !extra.ok()) {
    std::fprintf(stderr, "kv_whatif_bench: bad size flag\n");
    return 2;
  }
  auto space = bench::TokenSpace::ForVocab(32000, 1);
  bench::WorkloadOptions wo;
  wo.length_scale = a.length_scale;
  wo.concurrency = a.concurrency;
  auto w = bench::MakeWorkload("trace:kv-cache-tester:" + a.trace, *space, wo);
  if (!w.ok()) {
    std::fprintf(stderr, "kv_whatif_bench: %s\n", w.status().ToString().c_str());
    return 2;
  }
  KvLayout layout{a.layers, a.kv_heads, a.head_dim, a.page, KvDtype::kF16};
  auto kind = ParseEvictionPolicy(a.eviction);
  if (!kind.ok()) {
    std::fprintf(stderr, "kv_whatif_bench: %s\n", kind.status().ToString().c_str());
    return 2;
  }
  KvCacheConfig base = KvCacheConfig::Optimized(layout, "whatif", *dev, *host, "", 0);
  base.eviction = *kind;
  base.min_promote_tokens = 0;
  KvCacheConfig big = base;
  big.host_bytes = *host + *extra;
  std::printf("workload: %s\nlayout: %s, %s per block; device %s, host %s (+%s), %s eviction, concurrency %d\n",
              (*w)->Describe().c_str(), layout.ToString().c_str(), FormatBytes(layout.block_bytes()).c_str(),
              a.device.c_str(), a.host.c_str(), a.extra.c_str(), a.eviction.c_str(), a.concurrency);
  const Replay r0 = Run(base, **w, a);
  std::printf("base:   %lld requests (%lld skipped), %.1f s; %lld prompt tokens, hit ratio %.4f\n",
              (long long)r0.requests, (long long)r0.skipped, r0.wall_s, (long long)r0.counters.miss.prompt_tokens,
              r0.counters.hit_ratio());
  const auto& m = r0.counters.miss;
  std::printf(
      "        misses: never_seen %lld, evicted %lld (device %lld, host %lld), diverged %lld, loading %lld, policy "
      "%lld\n",
      (long long)m.never_seen, (long long)(m.evicted[0] + m.evicted[1] + m.evicted[2]), (long long)m.evicted[0],
      (long long)m.evicted[1], (long long)m.diverged, (long long)m.loading, (long long)m.policy);
  double estimate = -1;
  for (const auto& p : r0.counters.whatif) {
    std::printf("        estimate %s +%g GiB (%lld blocks): %.4f\n", p.tier, p.extra_gib, (long long)p.extra_blocks,
                r0.counters.whatif_ratio(p));
    if (std::string(p.tier) == "host" && std::fabs(p.extra_gib * double(1ull << 30) - double(*extra)) < 1)
      estimate = r0.counters.whatif_ratio(p);
  }
  const Replay r1 = Run(big, **w, a);
  std::printf("bigger: host %s: %lld requests (%lld skipped), %.1f s; hit ratio %.4f (measured)\n",
              FormatBytes(big.host_bytes).c_str(), (long long)r1.requests, (long long)r1.skipped, r1.wall_s,
              r1.counters.hit_ratio());
  if (estimate < 0) {
    std::printf("no what-if point for +%s of host; nothing to compare\n", a.extra.c_str());
    return 0;
  }
  const double diff_pp = 100 * (estimate - r1.counters.hit_ratio());
  std::printf("estimate %.4f vs measured %.4f: %+.2f percentage points (bar: %.1f) -> %s\n", estimate,
              r1.counters.hit_ratio(), diff_pp, a.max_pp, std::fabs(diff_pp) <= a.max_pp ? "PASS" : "FAIL");
  return std::fabs(diff_pp) <= a.max_pp ? 0 : 1;
}

}  // namespace
}  // namespace pg

int main(int argc, char** argv) {
  pg::Args a;
  for (int i = 1; i < argc; ++i) {
    const std::string s = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "kv_whatif_bench: %s needs a value\n", s.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (s == "--trace")
      a.trace = value();
    else if (s == "--device-mem")
      a.device = value();
    else if (s == "--host-mem")
      a.host = value();
    else if (s == "--extra")
      a.extra = value();
    else if (s == "--layers")
      a.layers = std::atoi(value().c_str());
    else if (s == "--kv-heads")
      a.kv_heads = std::atoi(value().c_str());
    else if (s == "--head-dim")
      a.head_dim = std::atoi(value().c_str());
    else if (s == "--page")
      a.page = std::atoi(value().c_str());
    else if (s == "--concurrency")
      a.concurrency = std::atoi(value().c_str());
    else if (s == "--passes")
      a.passes = std::atoi(value().c_str());
    else if (s == "--length-scale")
      a.length_scale = std::atof(value().c_str());
    else if (s == "--eviction")
      a.eviction = value();
    else if (s == "--max-pp")
      a.max_pp = std::atof(value().c_str());
    else {
      std::fprintf(stderr, "kv_whatif_bench: unknown flag %s (see the header of bench/kv_whatif_bench.cc)\n",
                   s.c_str());
      return 2;
    }
  }
  if (a.trace.empty() || a.concurrency < 1 || a.passes < 1 || !(a.length_scale > 0)) {
    std::fprintf(stderr, "kv_whatif_bench: --trace is required; --concurrency, --passes >= 1; --length-scale > 0\n");
    return 2;
  }
  return pg::Main(a);
}
