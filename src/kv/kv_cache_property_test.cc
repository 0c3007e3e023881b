// Property test: thousands of random lookups, allocations, loads, decodes,
// frees, hints and disk faults against a small three-tier cache, with
// CheckIntegrity() after every step and every reused block's bytes verified.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <random>

#include "kv/kv_cache_manager.h"
#include "kv/kv_test_util.h"

namespace pg {
namespace {

using kvtest::FakeEngine;
using kvtest::TempDir;

struct PropertyCase {
  const char* name;
  EvictionKind eviction;
  WritePolicy write;
  int64_t host_blocks;
  bool disk;
  int64_t min_promote_tokens;
  bool hints = false;  // random KV hints, session quotas and fair share (prefix_hints.h)
};

// What the hints and quotas did over one run (HintCounters totals).
struct HintsActed {
  int64_t held = 0;  // blocks retained or pinned by hints
  int64_t quota_evictions = 0;
};

void RunCase(const PropertyCase& pc, uint32_t seed, int steps, HintsActed* acted) {
  SCOPED_TRACE(testing::Message() << pc.name << " seed " << seed);
  TempDir dir;
  const uint64_t bb = kvtest::SmallLayout().block_bytes();
  KvCacheConfig c =
      KvCacheConfig::Optimized(kvtest::SmallLayout(), "prop-model", 24 * bb, uint64_t(pc.host_blocks) * bb,
                               pc.disk ? dir.path() : "", 40 * (160 + 16 + bb));
  c.eviction = pc.eviction;
  c.write_policy = pc.write;
  c.min_promote_tokens = pc.min_promote_tokens;
  if (pc.hints) {
    c.fair_share = true;
    c.pin_budget_blocks = 4;
    c.retain_budget_blocks = 8;
    c.session_quota_device_blocks = 6;
    c.session_quota_host_blocks = pc.host_blocks > 0 ? 5 : 0;
  }
  double now = 0;
  c.clock = [&now] { return now; };
  auto made = KvCacheManager::Create(c);
  ASSERT_TRUE(made.ok()) << made.status().ToString();
  KvCacheManager& kv = **made;
  FakeEngine eng(kv, "prop-model");
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return int(rng() % uint32_t(n)); };

  constexpr int kConvs = 6;
  std::vector<std::vector<int32_t>> history(kConvs);
  std::vector<int> generation(kConvs, 0);
  struct Live {
    int conv;
    bool prefilled = false;
    std::vector<int32_t> tokens;
  };
  std::map<SeqId, Live> live;
  SeqId next_id = 1;
  int64_t started = 0, reused = 0;

  for (int step = 0; step < steps; ++step) {
    now += 0.1;
    const int op = pick(100);
    if (op < 25 && live.size() < 4) {  // a new turn of some conversation
      const int conv = pick(kConvs);
      if (history[size_t(conv)].size() > 56) {
        history[size_t(conv)].clear();
        generation[size_t(conv)]++;
      }
      std::vector<int32_t> prompt = history[size_t(conv)];
      auto msg = kvtest::Message(conv + 100 * generation[size_t(conv)], int(prompt.size()), 1 + pick(9));
      prompt.insert(prompt.end(), msg.begin(), msg.end());
      CacheRequest req;
      req.session = "s" + std::to_string(conv);
      req.use_prefix_cache = pick(20) != 0;
      const SeqId id = next_id++;
      if (eng.Start(id, prompt, req)) {
        live[id] = Live{conv, false, prompt};
        ++started;
      }
    } else if (op < 70 && !live.empty()) {  // advance one sequence
      auto it = std::next(live.begin(), pick(int(live.size())));
      Live& l = it->second;
      if (!l.prefilled) {
        if (eng.Prefill(it->first)) {
          l.prefilled = true;
          reused += eng.cached(it->first);
        }
      } else {
        const int32_t t = 1 + pick(30000);
        if (eng.Decode(it->first, t)) {
          l.tokens.push_back(t);
        } else {
          history[size_t(l.conv)] = l.tokens;
          eng.Finish(it->first);
          live.erase(it);
        }
      }
    } else if (op < 82 && !live.empty()) {  // finish one
      auto it = std::next(live.begin(), pick(int(live.size())));
      if (it->second.prefilled) history[size_t(it->second.conv)] = it->second.tokens;
      eng.Finish(it->first);
      live.erase(it);
    } else if (op < 88) {
      kv.Tick();
    } else if (op < 92) {
      const std::string s = "s" + std::to_string(pick(kConvs));
      if (pick(2))
        kv.HoldSession(s, 1 + pick(20));
      else
        kv.ReleaseSession(s);
    } else if (op < 96 && pc.hints && pick(2)) {  // a KV hint on some conversation's prefix
      const auto& h = history[size_t(pick(kConvs))];
      const size_t n = h.empty() ? 0 : size_t(pick(int(h.size()) + 1));
      CacheRequest req;
      req.session = "s" + std::to_string(pick(kConvs));
      const PrefixAction a = PrefixAction(pick(4));
      const PrefixHintResult r = kv.ApplyPrefixHint(std::span<const int32_t>(h.data(), n), req, a, 1 + pick(20));
      EXPECT_LE(r.blocks, int64_t(n) / kv.page_tokens());
    } else if (op < 96) {  // look up and drop the lock
      const int conv = pick(kConvs);
      PrefixMatch m = kv.Match(history[size_t(conv)], {});
      EXPECT_LE(m.tokens(), int64_t(history[size_t(conv)].size()));
    } else if (op < 98 && pc.disk) {  // damage a random block file under the running cache
      std::vector<std::filesystem::path> files;
      for (auto& e : std::filesystem::recursive_directory_iterator(dir.path()))
        if (e.path().extension() == ".kvb") files.push_back(e.path());
      if (!files.empty()) {
        const auto& f = files[size_t(pick(int(files.size())))];
        std::error_code ec;
        switch (pick(3)) {
          case 0: std::filesystem::remove(f, ec); break;
          case 1: std::filesystem::resize_file(f, 50, ec); break;
          default: {
            std::fstream io(f, std::ios::in | std::ios::out | std::ios::binary);
            io.seekp(300);
            io.put(char(pick(256)));
          }
        }
      }
    }
    Status st = kv.CheckIntegrity();
    ASSERT_TRUE(st.ok()) << "step " << step << " op " << op << ": " << st.ToString();
    ASSERT_EQ(eng.bad(), 0) << "wrong bytes or cache length at step " << step;
  }
  for (auto& [id, l] : live) eng.Finish(id);
  kv.WaitIdle();
  Status st = kv.CheckIntegrity();
  ASSERT_TRUE(st.ok()) << st.ToString();
  EXPECT_EQ(eng.bad(), 0);
  const auto cnt = kv.counters();
  EXPECT_EQ(cnt.tiers[kDeviceTier].pinned_blocks, 0);
  EXPECT_GT(started, steps / 20);
  EXPECT_GT(reused, 0);
  EXPECT_GT(eng.checked(), 0);
  const HintCounters hc = kv.hint_counters();
  acted->held += hc.retained_blocks + hc.pinned_blocks;
  acted->quota_evictions += hc.quota_evictions;
}

TEST(KvCachePropertyTest, RandomOperationsKeepInvariants) {
  const PropertyCase cases[] = {
      {"device-only lru", EvictionKind::kLru, WritePolicy::kWriteBack, 0, false, 0},
      {"tiered cost write-back", EvictionKind::kCostAware, WritePolicy::kWriteBack, 12, true, 0},
      {"tiered cost write-through", EvictionKind::kCostAware, WritePolicy::kWriteThrough, 12, true, 0},
      {"tiered lru write-back min-promote", EvictionKind::kLru, WritePolicy::kWriteBack, 12, true, 8},
      {"device+disk write-through", EvictionKind::kCostAware, WritePolicy::kWriteThrough, 0, true, 0},
      {"tiered cost hints quotas fair-share", EvictionKind::kCostAware, WritePolicy::kWriteBack, 12, true, 0, true},
      {"tiered lru write-through hints quotas fair-share", EvictionKind::kLru, WritePolicy::kWriteThrough, 12, true, 0,
       true},
      {"device-only hints", EvictionKind::kLru, WritePolicy::kWriteBack, 0, false, 0, true},
  };
  for (const auto& pc : cases) {
    HintsActed acted;
    for (uint32_t seed : {1u, 2u, 3u}) {
      RunCase(pc, seed, 1500, &acted);
      if (HasFatalFailure()) return;
    }
    // The hints and the quotas did act in this configuration's runs. (Per
    // run it depends on when the mover threads finish: under heavy load one
    // seed's hints once found no block to hold.)
    if (pc.hints) {
      EXPECT_GT(acted.held, 0) << pc.name;
      EXPECT_GT(acted.quota_evictions, 0) << pc.name;
    }
  }
}

}  // namespace
}  // namespace pg
