// One scripted scenario per miss reason, with exact token counts, and the
// what-if estimate against a run with the bigger tier.
#include "kv/accounting/miss_accounting.h"

#include <gtest/gtest.h>

#include "kv/kv_test_util.h"

namespace pg {
namespace {

using kvtest::Make;
using kvtest::Message;
using kvtest::SmallLayout;
using kvtest::Tiered;

struct Outcome {
  int64_t cached = 0;
  MissCounts miss;
};

// Admits `tokens` as the engine's scheduler does (Match, ExplainMisses,
// AllocateSequence), waits for its loads, "computes" and commits the rest,
// checks the reasons add up, and frees it.
Outcome Admit(KvCacheManager& kv, SeqId id, const std::vector<int32_t>& tokens, const CacheRequest& req = {},
              int64_t limit_tokens = -1) {
  PrefixMatch m = kv.Match(tokens, req);
  if (limit_tokens >= 0) kvtest::LimitMatch(kv, &m, limit_tokens);
  kv.ExplainMisses(&m, tokens);
  std::vector<BlockId> table;
  Status st = kv.AllocateSequence(id, std::move(m), int64_t(tokens.size()), &table);
  EXPECT_TRUE(st.ok()) << st.ToString();
  if (!st.ok()) return {};
  while (!kv.PromotionReady(id, &table)) kv.Tick();
  Outcome o{kv.CachedTokens(id), kv.Misses(id)};
  const int page = kv.page_tokens();
  for (size_t b = size_t(o.cached / page); (b + 1) * size_t(page) <= tokens.size(); ++b)
    kv.CommitFullBlock(id, int(b), std::span<const int32_t>(tokens).subspan(b * size_t(page), size_t(page)));
  kv.FreeSequence(id);
  EXPECT_EQ(o.miss.total(), int64_t(tokens.size()) - o.cached);
  EXPECT_TRUE(kv.CheckIntegrity().ok()) << kv.CheckIntegrity().ToString();
  return o;
}

KvCacheConfig DeviceOnly(int64_t blocks) {
  return KvCacheConfig::Baseline(SmallLayout(), kvtest::kModel, uint64_t(blocks) * kvtest::kBlock);
}

TEST(MissReasonsTest, FirstRequestIsNeverSeen) {
  auto kv = Make(DeviceOnly(16));
  Outcome o = Admit(*kv, 1, Message(1, 0, 10));
  EXPECT_EQ(o.cached, 0);
  EXPECT_EQ(o.miss.never_seen, 10);
  // The next turn appends: only the new tokens (and the old partial block) miss.
  std::vector<int32_t> t = Message(1, 0, 12), more = Message(1, 1, 5);
  Admit(*kv, 2, t);
  t.insert(t.end(), more.begin(), more.end());  // 17 tokens: blocks 0-2 cached, block 3 and 1 token new
  o = Admit(*kv, 3, t);
  EXPECT_EQ(o.cached, 12);
  EXPECT_EQ(o.miss.never_seen, 5);
}

TEST(MissReasonsTest, LastBlockKeptForLogitsIsPolicyPartialBlockIsNeverSeen) {
  auto kv = Make(DeviceOnly(16));
  Admit(*kv, 1, Message(2, 0, 8));
  Outcome o = Admit(*kv, 2, Message(2, 0, 8));  // same 8 tokens: block 1 holds the last token
  EXPECT_EQ(o.cached, 4);
  EXPECT_EQ(o.miss.policy, 4);
  Admit(*kv, 3, Message(3, 0, 9));
  o = Admit(*kv, 4, Message(3, 0, 9));
  EXPECT_EQ(o.cached, 8);
  EXPECT_EQ(o.miss.never_seen, 1);
}

TEST(MissReasonsTest, EditInTheMiddleIsDiverged) {
  auto kv = Make(DeviceOnly(16));
  std::vector<int32_t> a = Message(4, 0, 14);
  Admit(*kv, 1, a);
  std::vector<int32_t> b = a;
  b[5] = 29999;  // block 1 of 3 full blocks changes
  Outcome o = Admit(*kv, 2, b);
  EXPECT_EQ(o.cached, 4);
  EXPECT_EQ(o.miss.diverged, 8);    // blocks 1 and 2
  EXPECT_EQ(o.miss.never_seen, 2);  // the partial block
  // A different first block is a new conversation, not a divergence.
  o = Admit(*kv, 3, Message(5, 0, 14));
  EXPECT_EQ(o.miss.never_seen, 14);
}

TEST(MissReasonsTest, DroppedFromDeviceIsEvictedWithItsAge) {
  double now = 10;
  KvCacheConfig c = DeviceOnly(4);
  c.clock = [&now] { return now; };
  auto kv = Make(c);
  Admit(*kv, 1, Message(6, 0, 9));  // 2 blocks + 1 token
  now = 20;
  Admit(*kv, 2, Message(7, 0, 16));  // takes all 4 blocks: the first prompt's blocks are evicted at t=20
  now = 50;
  Outcome o = Admit(*kv, 3, Message(6, 0, 9));
  EXPECT_EQ(o.cached, 0);
  EXPECT_EQ(o.miss.evicted[kDeviceTier], 8);
  EXPECT_EQ(o.miss.evicted_total(), 8);
  EXPECT_EQ(o.miss.never_seen, 1);
  EXPECT_DOUBLE_EQ(o.miss.evicted_age_s, 30);
  const CacheCounters cc = kv->counters();
  EXPECT_EQ(cc.miss.evicted[kDeviceTier], 8);
  EXPECT_EQ(cc.miss.prompt_tokens, 9 + 16 + 9);
}

TEST(MissReasonsTest, DroppedFromHostIsEvictedFromHost) {
  double now = 0;
  KvCacheConfig c = Tiered(4, 4, "", 0);
  c.eviction = EvictionKind::kLru;
  c.clock = [&now] { return now; };
  auto kv = Make(c);
  Admit(*kv, 1, Message(8, 0, 9));
  now = 10;
  Admit(*kv, 2, Message(9, 0, 16));  // the 2 blocks go to host
  now = 40;
  Admit(*kv, 3, Message(10, 0, 16));  // 4 more go to host: the first 2 leave it
  now = 100;
  Outcome o = Admit(*kv, 4, Message(8, 0, 9));
  EXPECT_EQ(o.cached, 0);
  EXPECT_EQ(o.miss.evicted[kHostTier], 8);
  EXPECT_EQ(o.miss.never_seen, 1);
  EXPECT_DOUBLE_EQ(o.miss.evicted_age_s, 60);
  // With 1 GiB more host those 8 tokens would have hit.
  const CacheCounters cc = kv->counters();
  ASSERT_EQ(cc.whatif.size(), 6u);
  EXPECT_STREQ(cc.whatif[0].tier, "host");
  EXPECT_EQ(cc.whatif[0].extra_gib, 1);
  EXPECT_EQ(cc.whatif[0].hit_tokens, cc.miss.cached_tokens + 8);
}

TEST(MissReasonsTest, DroppedPastAFullHostIsEvictedFromDeviceAndCountsForMoreHost) {
  KvCacheConfig c = Tiered(4, 2, "", 0);
  c.eviction = EvictionKind::kLru;
  auto kv = Make(c);
  Admit(*kv, 1, Message(20, 0, 9));   // 2 blocks
  Admit(*kv, 2, Message(21, 0, 16));  // the 2 go to host, which is then full
  Admit(*kv, 3, Message(22, 0, 16));  // 2 host blocks leave host; the device drops 2 more past it
  const CacheCounters before = kv->counters();
  EXPECT_GT(before.ghost_blocks[kHostTier], 2);  // host evictions and blocks dropped past the host
  Outcome o = Admit(*kv, 4, Message(21, 0, 16));
  EXPECT_EQ(o.cached, 0);
  EXPECT_EQ(o.miss.evicted_total() + o.miss.policy, 16);
  EXPECT_GT(o.miss.evicted[kDeviceTier], 0);  // some of it never reached the full host
  const CacheCounters after = kv->counters();
  EXPECT_EQ(after.whatif[0].hit_tokens - after.miss.cached_tokens,
            before.whatif[0].hit_tokens - before.miss.cached_tokens + 12);
}

TEST(MissReasonsTest, BlockStillLoadingForAnotherRequestIsLoading) {
  KvCacheConfig c = Tiered(16, 64, "", 0);
  c.debug_load_delay_s = 0.5;  // the promotion cannot land between the two admissions
  auto kv = Make(c);
  std::vector<int32_t> a = Message(100, 0, 25);
  Admit(*kv, 1, a);
  Admit(*kv, 2, Message(101, 0, 61));  // a goes to host
  std::vector<int32_t> a1 = a, a2 = a;
  a1.push_back(1);
  a2.push_back(2);
  PrefixMatch m1 = kv->Match(a1, {});
  kv->ExplainMisses(&m1, a1);
  std::vector<BlockId> t1;
  ASSERT_TRUE(kv->AllocateSequence(10, std::move(m1), int64_t(a1.size()), &t1).ok());
  PrefixMatch m2 = kv->Match(a2, {});
  EXPECT_EQ(m2.tokens(), 0);
  kv->ExplainMisses(&m2, a2);
  std::vector<BlockId> t2;
  ASSERT_TRUE(kv->AllocateSequence(11, std::move(m2), int64_t(a2.size()), &t2).ok());
  while (!kv->PromotionReady(10, &t1)) kv->Tick();
  EXPECT_EQ(kv->CachedTokens(10), 24);
  EXPECT_EQ(kv->Misses(10).policy, 0);
  EXPECT_EQ(kv->Misses(10).never_seen, 2);
  ASSERT_TRUE(kv->PromotionReady(11, &t2));
  EXPECT_EQ(kv->CachedTokens(11), 0);
  EXPECT_EQ(kv->Misses(11).loading, 24);    // 6 full blocks in flight for sequence 10
  EXPECT_EQ(kv->Misses(11).never_seen, 2);  // 26 tokens: the partial block
  kv->FreeSequence(10);
  kv->FreeSequence(11);
  EXPECT_TRUE(kv->CheckIntegrity().ok());
}

TEST(MissReasonsTest, FailedLoadIsLoading) {
  kvtest::TempDir dir;
  KvCacheConfig c = Tiered(4, 0, dir.path(), 64);
  auto kv = Make(c);
  std::vector<int32_t> a = Message(11, 0, 9);
  Admit(*kv, 1, a);
  Admit(*kv, 2, Message(12, 0, 16));  // a's blocks go to disk
  kv->WaitIdle();
  // Damage every block file: the loads fail verification.
  int damaged = 0;
  for (auto& f : std::filesystem::recursive_directory_iterator(dir.path())) {
    if (f.path().extension() != ".kvb") continue;
    std::filesystem::resize_file(f.path(), 200);
    ++damaged;
  }
  ASSERT_GT(damaged, 0);
  Outcome o = Admit(*kv, 3, a);
  EXPECT_EQ(o.cached, 0);
  EXPECT_EQ(o.miss.loading, 8);
  EXPECT_EQ(o.miss.never_seen, 1);
  EXPECT_EQ(kv->counters().miss.cached_tokens, 0);
}

TEST(MissReasonsTest, SkippedByPolicy) {
  // Short host hit below min_promote_tokens.
  KvCacheConfig c = Tiered(4, 64, "", 0);
  c.min_promote_tokens = 12;
  auto kv = Make(c);
  Admit(*kv, 1, Message(95, 0, 9));
  Admit(*kv, 2, Message(96, 0, 16));
  Outcome o = Admit(*kv, 3, Message(95, 0, 9));
  EXPECT_EQ(o.cached, 0);
  EXPECT_EQ(o.miss.policy, 8);
  EXPECT_EQ(o.miss.never_seen, 1);
  // The policy hook (quotas): keep one block of a 4-block hit.
  auto kv2 = Make(DeviceOnly(16));
  Admit(*kv2, 1, Message(13, 0, 17));
  o = Admit(*kv2, 2, Message(13, 0, 17), {}, /*limit_tokens=*/4);
  EXPECT_EQ(o.cached, 4);
  EXPECT_EQ(o.miss.policy, 12);
  EXPECT_EQ(o.miss.never_seen, 1);
  // The cache off for the request.
  CacheRequest off;
  off.use_prefix_cache = false;
  o = Admit(*kv2, 3, Message(13, 0, 17), off);
  EXPECT_EQ(o.miss.policy, 17);
  EXPECT_TRUE(kv2->CheckIntegrity().ok());
}

// The ghost's what-if for "1 GiB more host" (all of it, for 512-byte blocks)
// against the same workload run with that much host.
TEST(WhatIfTest, EstimateMatchesTheBiggerTier) {
  auto workload = [](KvCacheManager& kv) {
    SeqId id = 1;
    for (int round = 0; round < 3; ++round)
      for (int conv = 0; conv < 4; ++conv) Admit(kv, id++, Message(200 + conv, 0, 9 + 4 * conv));
  };
  KvCacheConfig small = DeviceOnly(6);
  auto kv = Make(small);
  workload(*kv);
  const CacheCounters a = kv->counters();
  KvCacheConfig big = Tiered(6, int64_t((uint64_t(1) << 30) / kvtest::kBlock), "", 0);
  big.eviction = EvictionKind::kLru;
  auto kv_big = Make(big);
  workload(*kv_big);
  const CacheCounters b = kv_big->counters();
  EXPECT_EQ(a.miss.prompt_tokens, b.miss.prompt_tokens);
  EXPECT_LT(a.hit_ratio(), b.hit_ratio());
  EXPECT_GT(b.hit_ratio(), 0.5);
  EXPECT_DOUBLE_EQ(a.whatif_ratio(a.whatif[0]), b.hit_ratio());
}

}  // namespace
}  // namespace pg
