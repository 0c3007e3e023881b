#include "kv/kv_cache_manager.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kv/kv_test_util.h"
#include "kv/media/disk_tier.h"

namespace pg {
namespace {

using kvtest::FakeEngine;
using kvtest::Message;
using kvtest::SmallLayout;
using kvtest::TempDir;

using kvtest::kBlock;
using kvtest::kModel;
using kvtest::Make;
using kvtest::Tiered;

KvCacheConfig DeviceOnly(int64_t blocks, EvictionKind p = EvictionKind::kLru) {
  KvCacheConfig c = KvCacheConfig::Baseline(SmallLayout(), kModel, uint64_t(blocks) * kBlock);
  c.eviction = p;
  return c;
}

#define EXPECT_INTEGRITY(kv) EXPECT_TRUE((kv).CheckIntegrity().ok()) << (kv).CheckIntegrity().ToString()

TEST(KvCacheManagerTest, RejectsBadConfig) {
  EXPECT_FALSE(KvCacheManager::Create(DeviceOnly(0)).ok());
  KvCacheConfig c = DeviceOnly(4);
  c.host_bytes = 100;  // below one block
  EXPECT_FALSE(KvCacheManager::Create(c).ok());
  TempDir d;
  KvCacheConfig c2 = DeviceOnly(4);
  c2.disk_dir = d.path();
  c2.disk_bytes = 0;
  auto r = KvCacheManager::Create(c2);
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.status().message().find("--kv-disk-size"), std::string::npos);
  EXPECT_FALSE(ParseEvictionPolicy("fifo").ok());
  EXPECT_EQ(*ParseWritePolicy("write-through"), WritePolicy::kWriteThrough);
}

TEST(KvCacheManagerTest, DeviceReuseAcrossTurns) {
  auto kv = Make(DeviceOnly(64));
  FakeEngine eng(*kv, kModel);
  std::vector<int32_t> conv = Message(1, 0, 22);
  auto r0 = eng.Turn(1, &conv, 6);
  EXPECT_EQ(r0.total(), 0);
  const int64_t full_blocks_before = int64_t(conv.size()) / 4;
  auto msg = Message(1, 1, 5);
  conv.insert(conv.end(), msg.begin(), msg.end());
  auto r1 = eng.Turn(2, &conv, 6);
  EXPECT_EQ(r1[kDeviceTier], full_blocks_before * 4);
  EXPECT_EQ(r1[kHostTier] + r1[kDiskTier], 0);
  EXPECT_EQ(eng.bad(), 0);
  EXPECT_GT(eng.checked(), 0);
  EXPECT_INTEGRITY(*kv);
  auto c = kv->counters();
  EXPECT_EQ(c.tiers[kDeviceTier].hit_tokens, full_blocks_before * 4);
  EXPECT_EQ(c.reused_tokens, full_blocks_before * 4);
}

TEST(KvCacheManagerTest, AlwaysLeavesOneTokenToCompute) {
  auto kv = Make(DeviceOnly(16));
  FakeEngine eng(*kv, kModel);
  std::vector<int32_t> p = Message(2, 0, 8);  // exactly two blocks
  eng.Turn(1, &p, 0);
  std::vector<int32_t> same = Message(2, 0, 8);
  PrefixMatch m = kv->Match(same, {});
  EXPECT_EQ(m.tokens(), 4);  // not 8: the last token must be computed
  std::vector<int32_t> longer = Message(2, 0, 8);
  longer.push_back(5);
  EXPECT_EQ(kv->Match(longer, {}).tokens(), 8);
  EXPECT_INTEGRITY(*kv);
}

TEST(KvCacheManagerTest, NoPrefixCacheStillAllocates) {
  KvCacheConfig c = DeviceOnly(16);
  c.prefix_cache = false;
  auto kv = Make(c);
  FakeEngine eng(*kv, kModel);
  std::vector<int32_t> p = Message(3, 0, 20);
  eng.Turn(1, &p, 4);
  std::vector<int32_t> p2 = Message(3, 0, 20);
  EXPECT_EQ(eng.Turn(2, &p2, 4).total(), 0);
  EXPECT_EQ(kv->counters().index_entries, 0);
  EXPECT_EQ(eng.bad(), 0);
  EXPECT_INTEGRITY(*kv);
  // Per-request opt-out on a caching manager: no lookup, nothing published.
  auto kv2 = Make(DeviceOnly(16));
  FakeEngine eng2(*kv2, kModel);
  CacheRequest off;
  off.use_prefix_cache = false;
  std::vector<int32_t> q = Message(3, 0, 20);
  eng2.Turn(1, &q, 0, off);
  EXPECT_EQ(kv2->counters().index_entries, 0);
  EXPECT_INTEGRITY(*kv2);
}

TEST(KvCacheManagerTest, SaltsAreIsolated) {
  auto kv = Make(DeviceOnly(32));
  FakeEngine eng(*kv, kModel);
  CacheRequest a, b;
  a.salt = "tenant-a";
  b.salt = "tenant-b";
  std::vector<int32_t> p = Message(4, 0, 17);
  eng.Turn(1, &p, 0, a);
  EXPECT_EQ(kv->Match(Message(4, 0, 17), b).tokens(), 0);
  EXPECT_EQ(kv->Match(Message(4, 0, 17), a).tokens(), 16);
}

TEST(KvCacheManagerTest, AllocationFailsCleanlyWhenFull) {
  auto kv = Make(DeviceOnly(4));
  std::vector<BlockId> table;
  PrefixMatch m = kv->Match(Message(5, 0, 12), {});
  ASSERT_TRUE(kv->AllocateSequence(1, std::move(m), 12, &table).ok());
  EXPECT_EQ(table.size(), 3u);
  EXPECT_FALSE(kv->CanAllocate(2));
  Status st = kv->AllocateSequence(2, kv->Match(Message(6, 0, 8), {}), 8, &table);
  EXPECT_EQ(st.code(), StatusCode::kResourceExhausted);
  EXPECT_TRUE(kv->CanAppend(1, 4));
  EXPECT_FALSE(kv->CanAppend(1, 5));
  EXPECT_INTEGRITY(*kv);
  kv->FreeSequence(1);
  EXPECT_INTEGRITY(*kv);
  EXPECT_TRUE(kv->CanAllocate(4));
}

TEST(KvCacheManagerTest, HostTierPromotesIdenticalBytes) {
  auto kv = Make(Tiered(8, 64, "", 0));
  FakeEngine eng(*kv, kModel);
  std::vector<int32_t> a = Message(10, 0, 25), b = Message(11, 0, 25);
  eng.Turn(1, &a, 3);  // 7 full blocks
  eng.Turn(2, &b, 3);  // pushes a to host
  auto c0 = kv->counters();
  EXPECT_GT(c0.tiers[kDeviceTier].evictions, 0);
  EXPECT_GT(c0.tiers[kDeviceTier].demotions, 0);
  std::vector<int32_t> a2 = a;
  auto more = Message(10, 1, 3);
  a2.insert(a2.end(), more.begin(), more.end());
  auto r = eng.Turn(3, &a2, 2);
  EXPECT_EQ(r.total(), 28);
  EXPECT_GT(r[kHostTier], 0);
  EXPECT_EQ(eng.bad(), 0);
  auto c = kv->counters();
  EXPECT_GT(c.tiers[kHostTier].promotions, 0);
  EXPECT_EQ(c.tiers[kHostTier].hit_tokens, r[kHostTier]);
  EXPECT_INTEGRITY(*kv);
}

TEST(KvCacheManagerTest, DiskTierPromotesIdenticalBytes) {
  TempDir dir;
  auto kv = Make(Tiered(8, 4, dir.path(), 1000));
  FakeEngine eng(*kv, kModel);
  auto convs = kvtest::OpenConversations(eng, 4, 20, 29, 3);
  auto c0 = kv->counters();
  EXPECT_GT(c0.tiers[kDiskTier].used_blocks, 0);
  EXPECT_GT(c0.tiers[kHostTier].demotions, 0);
  auto r = eng.Turn(10, &convs[0], 1);
  EXPECT_EQ(r.total(), 28);  // 32 tokens: the last block is left to compute
  EXPECT_GT(r[kDiskTier], 0);
  EXPECT_EQ(eng.bad(), 0);
  EXPECT_GT(kv->counters().tiers[kDiskTier].promotions, 0);
  EXPECT_INTEGRITY(*kv);
}

TEST(KvCacheManagerTest, RestartGetsDiskHits) {
  TempDir dir;
  std::vector<int32_t> conv = Message(30, 0, 41);
  {
    auto kv = Make(Tiered(16, 16, dir.path(), 1000));
    FakeEngine eng(*kv, kModel);
    eng.Turn(1, &conv, 3);
    ASSERT_TRUE(kv->Flush().ok());
    EXPECT_EQ(kv->counters().tiers[kDiskTier].used_blocks, 11);
  }
  auto kv = Make(Tiered(16, 16, dir.path(), 1000));
  EXPECT_EQ(kv->counters().tiers[kDiskTier].used_blocks, 11);
  EXPECT_EQ(kv->counters().index_entries, 11);
  FakeEngine eng(*kv, kModel);
  conv.push_back(7);
  auto r = eng.Turn(1, &conv, 0);
  EXPECT_EQ(r[kDiskTier], 44);
  EXPECT_EQ(eng.bad(), 0);
  EXPECT_INTEGRITY(*kv);
  // Another model on the same directory sees nothing.
  KvCacheConfig other = Tiered(16, 16, dir.path(), 1000);
  other.model_identity = "other-model";
  auto kv2 = Make(other);
  EXPECT_EQ(kv2->counters().tiers[kDiskTier].used_blocks, 0);
}

TEST(KvCacheManagerTest, WriteThroughCopiesToHostWithoutEviction) {
  for (WritePolicy wp : {WritePolicy::kWriteThrough, WritePolicy::kWriteBack}) {
    KvCacheConfig c = Tiered(64, 64, "", 0);
    c.write_policy = wp;
    auto kv = Make(c);
    FakeEngine eng(*kv, kModel);
    std::vector<int32_t> p = Message(70, 0, 21);
    eng.Turn(1, &p, 0);
    kv->Tick();
    ASSERT_TRUE(kv->Flush().ok());  // waits for in-flight copies
    const auto cnt = kv->counters();
    EXPECT_EQ(cnt.tiers[kDeviceTier].evictions, 0);
    if (wp == WritePolicy::kWriteThrough) {
      EXPECT_EQ(cnt.tiers[kHostTier].cached_blocks, 5);
    } else {
      EXPECT_EQ(cnt.tiers[kHostTier].cached_blocks, 0);
    }
    EXPECT_TRUE(kv->CheckIntegrity().ok());
  }
}

// Device only, 10 blocks: an 8-block conversation, then a 4-block stranger.
int64_t ReuseAfterPressure(EvictionKind p) {
  auto kv = Make(DeviceOnly(10, p));
  FakeEngine eng(*kv, kModel);
  std::vector<int32_t> a = Message(80, 0, 33);
  eng.Turn(1, &a, 0);
  std::vector<int32_t> b = Message(81, 0, 16);
  eng.Turn(2, &b, 0);
  EXPECT_TRUE(kv->CheckIntegrity().ok());
  std::vector<int32_t> a2 = Message(80, 0, 33);
  return eng.Turn(3, &a2, 0).total();
}

TEST(KvCacheEvictionTest, CostAwareEvictsTailsLruEvictsHeads) {
  // LRU drops the conversation's first blocks (the oldest commits): nothing reusable.
  EXPECT_EQ(ReuseAfterPressure(EvictionKind::kLru), 0);
  // Cost-aware drops the tail: the head of the chain stays usable.
  EXPECT_GE(ReuseAfterPressure(EvictionKind::kCostAware), 16);
}

TEST(KvCacheEvictionTest, SessionHintRetainsBlocks) {
  double now = 1000;
  KvCacheConfig c = DeviceOnly(10, EvictionKind::kLru);
  c.clock = [&now] { return now; };
  auto kv = Make(c);
  FakeEngine eng(*kv, kModel);
  CacheRequest agent;
  agent.session = "agent-1";
  std::vector<int32_t> a = Message(90, 0, 21);  // 5 blocks, oldest
  eng.Turn(1, &a, 0, agent);
  kv->HoldSession("agent-1", 30);
  std::vector<int32_t> b = Message(91, 0, 13);  // 3 blocks
  eng.Turn(2, &b, 0);
  std::vector<int32_t> d = Message(92, 0, 17);  // needs 5: takes b's, not a's
  eng.Turn(3, &d, 0);
  EXPECT_EQ(kv->Match(Message(90, 0, 21), agent).tokens(), 20);
  now += 31;  // hint expired: a is fair game again
  std::vector<int32_t> e = Message(93, 0, 37);
  eng.Turn(4, &e, 0);
  EXPECT_LT(kv->Match(Message(90, 0, 21), agent).tokens(), 20);
  EXPECT_TRUE(kv->CheckIntegrity().ok());
}

TEST(KvCacheManagerTest, ShortHostHitsAreNotPromoted) {
  KvCacheConfig c = Tiered(4, 64, "", 0);
  c.min_promote_tokens = 12;
  auto kv = Make(c);
  FakeEngine eng(*kv, kModel);
  std::vector<int32_t> a = Message(95, 0, 9);  // 2 blocks
  eng.Turn(1, &a, 0);
  std::vector<int32_t> b = Message(96, 0, 16);
  eng.Turn(2, &b, 0);  // a goes to host
  PrefixMatch m = kv->Match(Message(95, 0, 9), {});
  EXPECT_EQ(m.tokens(), 0);
  EXPECT_EQ(kv->counters().skipped_short_hits, 1);
}

TEST(KvCacheManagerTest, InterleavedSequencesWhileLoading) {
  auto kv = Make(Tiered(16, 64, "", 0));
  FakeEngine eng(*kv, kModel);
  std::vector<int32_t> a = Message(100, 0, 25);
  eng.Turn(1, &a, 0);
  std::vector<int32_t> filler = Message(101, 0, 61);
  eng.Turn(2, &filler, 0);  // a to host
  // Two sequences with the same prefix start back to back; the second must
  // not read blocks still being loaded for the first.
  std::vector<int32_t> a1 = a, a2 = a;
  a1.push_back(1);
  a2.push_back(2);
  ASSERT_TRUE(eng.Start(10, a1));
  ASSERT_TRUE(eng.Start(11, a2));
  EXPECT_TRUE(kv->CheckIntegrity().ok()) << kv->CheckIntegrity().ToString();
  while (!eng.Prefill(10)) kv->Tick();
  while (!eng.Prefill(11)) kv->Tick();
  EXPECT_EQ(eng.cached(10), 24);
  EXPECT_EQ(eng.bad(), 0);
  eng.Finish(10);
  eng.Finish(11);
  EXPECT_TRUE(kv->CheckIntegrity().ok()) << kv->CheckIntegrity().ToString();
}

// AllocateSequence takes every device slot before it starts a load: an
// eviction that must copy its victim to host first waits for that copy, and
// were it queued behind the sequence's own loads it would wait a whole
// promotion (holding the scheduler thread, and leaving no time in which the
// sequence is seen loading).
TEST(KvCacheManagerTest, EvictionCopiesDoNotWaitBehindOwnLoads) {
  KvCacheConfig c = Tiered(16, 64, "", 0);
  c.eviction = EvictionKind::kLru;
  c.debug_load_delay_s = 2;  // the two loads below hold both load-lane threads (io_threads 2)
  auto kv = Make(c);
  FakeEngine eng(*kv, kModel);
  std::vector<int32_t> a = Message(200, 0, 9);  // 2 full blocks
  eng.Turn(1, &a, 0);
  std::vector<int32_t> b = Message(201, 0, 62);  // 16 slots: a goes to host
  eng.Turn(2, &b, 0);
  kv->Tick();  // write-back cleaning: the 8 oldest of b's 15 cached blocks get host copies
  kv->WaitIdle();
  ASSERT_EQ(kv->counters().tiers[kHostTier].promotions, 0);
  // x: a's 2 blocks from host and 9 fresh slots: 1 free, 8 evictions that
  // drop blocks with host copies, then evictions that copy their victim down.
  std::vector<int32_t> x(a.begin(), a.begin() + 8);
  for (int i = 0; i < 33; ++i) x.push_back(1000 + i);
  ASSERT_TRUE(eng.Start(3, x));
  EXPECT_EQ(kv->counters().tiers[kHostTier].promotions, 0) << "a slot waited for a copy queued behind the loads";
  while (!eng.Prefill(3)) kv->Tick();
  EXPECT_EQ(eng.cached(3), 8);
  EXPECT_EQ(kv->counters().tiers[kHostTier].promotions, 2);
  EXPECT_EQ(eng.bad(), 0);
  eng.Finish(3);
  EXPECT_INTEGRITY(*kv);
}

// Another request's loads: while sequence 3's two slow loads hold the
// mover's load threads, sequence 4's admission evicts blocks that must be
// copied to host first. Those copies run on the store lane, so Start
// returns at once; behind the loads it would hold the scheduler thread
// until one of them landed (and was counted as a promotion).
TEST(KvCacheManagerTest, EvictionCopiesDoNotWaitBehindOtherLoads) {
  KvCacheConfig c = Tiered(16, 64, "", 0);
  c.eviction = EvictionKind::kLru;
  c.debug_load_delay_s = 2;  // the two loads below hold both load threads (io_threads 2)
  auto kv = Make(c);
  FakeEngine eng(*kv, kModel);
  std::vector<int32_t> a = Message(210, 0, 9);  // 2 full blocks
  eng.Turn(1, &a, 0);
  std::vector<int32_t> b = Message(211, 0, 62);  // 16 slots: a goes to host, b's 15 blocks stay cached
  eng.Turn(2, &b, 0);
  ASSERT_EQ(kv->counters().tiers[kHostTier].cached_blocks, 2);
  std::vector<int32_t> a2 = a;  // a's 2 blocks from host, one fresh slot
  ASSERT_TRUE(eng.Start(3, a2));
  ASSERT_FALSE(eng.Prefill(3));  // loading
  const int64_t demotions = kv->counters().tiers[kDeviceTier].demotions;
  std::vector<int32_t> d = Message(212, 0, 16);  // 4 fresh slots: b's oldest blocks, copied down first
  ASSERT_TRUE(eng.Start(4, d));
  EXPECT_GT(kv->counters().tiers[kDeviceTier].demotions, demotions);  // the copies did run, and landed
  EXPECT_EQ(kv->counters().tiers[kHostTier].promotions, 0) << "an eviction copy waited behind another sequence's loads";
  ASSERT_TRUE(eng.Prefill(4));
  while (!eng.Prefill(3)) kv->Tick();
  EXPECT_EQ(eng.cached(3), 8);
  EXPECT_EQ(kv->counters().tiers[kHostTier].promotions, 2);
  EXPECT_EQ(eng.bad(), 0);
  eng.Finish(3);
  eng.Finish(4);
  EXPECT_INTEGRITY(*kv);
}

// An admission copies down only the blocks it frees: the copies
// PrepareDeviceRoom starts are of the coldest blocks, and the slots are
// taken from those once the copies land, not from other blocks copied down
// beside them while they are pinned (which once copied two blocks per slot).
TEST(KvCacheManagerTest, AdmissionCopiesDownOnlyWhatItFrees) {
  KvCacheConfig c = Tiered(16, 64, "", 0);
  c.eviction = EvictionKind::kLru;
  auto kv = Make(c);
  FakeEngine eng(*kv, kModel);
  std::vector<int32_t> b = Message(221, 0, 62);  // all 16 device slots, no host copies
  eng.Turn(2, &b, 0);
  kv->WaitIdle();
  const CacheCounters before = kv->counters();
  std::vector<int32_t> d = Message(222, 0, 16);  // fresh slots: b's oldest blocks go down to host
  ASSERT_TRUE(eng.Start(4, d));
  ASSERT_TRUE(eng.Prefill(4));
  kv->WaitIdle();
  const int64_t evicted = kv->counters().tiers[kDeviceTier].evictions - before.tiers[kDeviceTier].evictions;
  EXPECT_GT(evicted, 0);
  EXPECT_EQ(kv->counters().tiers[kDeviceTier].demotions - before.tiers[kDeviceTier].demotions, evicted);
  EXPECT_EQ(eng.bad(), 0);
  eng.Finish(4);
  EXPECT_INTEGRITY(*kv);
}

}  // namespace
}  // namespace pg
