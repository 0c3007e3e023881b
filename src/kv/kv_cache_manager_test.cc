#include "kv/kv_cache_manager.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kv/disk_tier.h"
#include "kv/kv_test_util.h"

namespace pg {
namespace {

using kvtest::FakeEngine;
using kvtest::Message;
using kvtest::SmallLayout;
using kvtest::TempDir;

constexpr const char* kModel = "test-model";
constexpr uint64_t kBlock = 512;  // SmallLayout().block_bytes()

std::unique_ptr<KvCacheManager> Make(KvCacheConfig c) {
  auto m = KvCacheManager::Create(std::move(c));
  EXPECT_TRUE(m.ok()) << m.status().ToString();
  return m.ok() ? std::move(*m) : nullptr;
}

KvCacheConfig DeviceOnly(int64_t blocks, EvictionKind p = EvictionKind::kLru) {
  KvCacheConfig c = KvCacheConfig::Baseline(SmallLayout(), kModel, uint64_t(blocks) * kBlock);
  c.eviction = p;
  return c;
}

KvCacheConfig Tiered(int64_t dev, int64_t host, const std::string& dir, int64_t disk_blocks) {
  const uint64_t file_bytes = 160 + 4 * 4 + kBlock;
  return KvCacheConfig::Optimized(SmallLayout(), kModel, uint64_t(dev) * kBlock, uint64_t(host) * kBlock, dir,
                                  uint64_t(disk_blocks) * file_bytes);
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
  EXPECT_EQ(r1.device_tokens, full_blocks_before * 4);
  EXPECT_EQ(r1.host_tokens + r1.disk_tokens, 0);
  EXPECT_EQ(eng.bad(), 0);
  EXPECT_GT(eng.checked(), 0);
  EXPECT_INTEGRITY(*kv);
  auto c = kv->counters();
  EXPECT_EQ(c.device.hit_tokens, full_blocks_before * 4);
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
  EXPECT_GT(c0.device.evictions, 0);
  EXPECT_GT(c0.device.demotions, 0);
  std::vector<int32_t> a2 = a;
  auto more = Message(10, 1, 3);
  a2.insert(a2.end(), more.begin(), more.end());
  auto r = eng.Turn(3, &a2, 2);
  EXPECT_EQ(r.total(), 28);
  EXPECT_GT(r.host_tokens, 0);
  EXPECT_EQ(eng.bad(), 0);
  auto c = kv->counters();
  EXPECT_GT(c.host.promotions, 0);
  EXPECT_EQ(c.host.hit_tokens, r.host_tokens);
  EXPECT_INTEGRITY(*kv);
}

TEST(KvCacheManagerTest, DiskTierPromotesIdenticalBytes) {
  TempDir dir;
  auto kv = Make(Tiered(8, 4, dir.path(), 1000));
  FakeEngine eng(*kv, kModel);
  std::vector<std::vector<int32_t>> convs;
  for (int i = 0; i < 4; ++i) {
    convs.push_back(Message(20 + i, 0, 29));
    eng.Turn(i + 1, &convs.back(), 3);
  }
  auto c0 = kv->counters();
  EXPECT_GT(c0.disk.used_blocks, 0);
  EXPECT_GT(c0.host.demotions, 0);
  auto r = eng.Turn(10, &convs[0], 1);
  EXPECT_EQ(r.total(), 28);  // 32 tokens: the last block is left to compute
  EXPECT_GT(r.disk_tokens, 0);
  EXPECT_EQ(eng.bad(), 0);
  EXPECT_GT(kv->counters().disk.promotions, 0);
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
    EXPECT_EQ(kv->counters().disk.used_blocks, 11);
  }
  auto kv = Make(Tiered(16, 16, dir.path(), 1000));
  EXPECT_EQ(kv->counters().disk.used_blocks, 11);
  EXPECT_EQ(kv->counters().index_entries, 11);
  FakeEngine eng(*kv, kModel);
  conv.push_back(7);
  auto r = eng.Turn(1, &conv, 0);
  EXPECT_EQ(r.disk_tokens, 44);
  EXPECT_EQ(eng.bad(), 0);
  EXPECT_INTEGRITY(*kv);
  // Another model on the same directory sees nothing.
  KvCacheConfig other = Tiered(16, 16, dir.path(), 1000);
  other.model_identity = "other-model";
  auto kv2 = Make(other);
  EXPECT_EQ(kv2->counters().disk.used_blocks, 0);
}

// Puts one conversation on disk only (device and host cleared of it).
struct DiskFaultFixture {
  TempDir dir;
  std::unique_ptr<KvCacheManager> kv;
  std::unique_ptr<FakeEngine> eng;
  std::vector<int32_t> conv = Message(40, 0, 33);  // 8 full blocks
  std::vector<BlockHash> chain;

  DiskFaultFixture() {
    KvCacheConfig c = Tiered(12, 4, dir.path(), 1000);
    c.write_policy = WritePolicy::kWriteThrough;
    kv = Make(c);
    eng = std::make_unique<FakeEngine>(*kv, kModel);
    std::vector<int32_t> tmp = conv;
    eng->Turn(1, &tmp, 0);
    EXPECT_EQ(eng->bad(), 0);
    for (int i = 0; i < 3; ++i) {
      std::vector<int32_t> other = Message(41 + i, 0, 33);
      eng->Turn(2 + i, &other, 0);
    }
    chain = kvtest::ChainOf(RootHash(kModel, ""), conv, 4);
    kv->WaitIdle();
  }
  std::string PathOf(int block) const {
    const std::string hex = chain[size_t(block)].Hex();
    return dir.path() + "/" + hex.substr(0, 2) + "/" + hex + ".kvb";
  }
  // Reruns the conversation: returns reused tokens.
  int64_t Rerun(SeqId id) {
    std::vector<int32_t> again = conv;
    return eng->Turn(id, &again, 0).total();
  }
};

TEST(KvCacheDiskFaultTest, CorruptBlockIsAMissAndDeleted) {
  DiskFaultFixture f;
  ASSERT_TRUE(std::filesystem::exists(f.PathOf(3)));
  EXPECT_EQ(f.kv->Match(f.conv, {}).tokens(), 32);  // all 8 blocks reachable
  {
    std::fstream io(f.PathOf(3), std::ios::in | std::ios::out | std::ios::binary);
    io.seekp(400);
    io.put('\x01');
    io.put('\x02');
  }
  EXPECT_EQ(f.Rerun(10), 12);  // cut at block 3
  EXPECT_EQ(f.eng->bad(), 0);
  auto c = f.kv->counters();
  EXPECT_EQ(c.failed_loads, 1);
  EXPECT_GE(c.disk.errors, 1);
  // The damaged file was deleted; write-through may have written the
  // recomputed block again since, and then it must be whole and right.
  f.kv->WaitIdle();
  if (std::filesystem::exists(f.PathOf(3))) {
    auto disk = DiskTier::Open(f.dir.path(), SmallLayout(), kModel);
    ASSERT_TRUE(disk.ok());
    std::vector<uint8_t> got(kBlock);
    auto tokens = std::span<const int32_t>(f.conv).subspan(12, 4);
    ASSERT_TRUE((*disk)->Read(f.chain[3], tokens, got.data()).ok());
    EXPECT_TRUE(kvtest::HasPattern(f.chain[3], got.data(), kBlock));
  }
  EXPECT_TRUE(f.kv->CheckIntegrity().ok()) << f.kv->CheckIntegrity().ToString();
  EXPECT_EQ(f.Rerun(11), 32);  // recomputed blocks were published again
  EXPECT_EQ(f.eng->bad(), 0);
}

TEST(KvCacheDiskFaultTest, TruncatedBlockIsAMiss) {
  DiskFaultFixture f;
  std::filesystem::resize_file(f.PathOf(5), 100);
  ASSERT_TRUE(f.eng->Start(10, f.conv));
  std::vector<BlockId> table;
  while (!f.kv->PromotionReady(10, &table)) f.kv->Tick();
  EXPECT_FALSE(std::filesystem::exists(f.PathOf(5)));  // counted, then deleted
  EXPECT_EQ(f.kv->CachedTokens(10), 20);
  ASSERT_TRUE(f.eng->Prefill(10));
  f.eng->Finish(10);
  EXPECT_EQ(f.eng->bad(), 0);
  EXPECT_EQ(f.kv->counters().failed_loads, 1);
  EXPECT_TRUE(f.kv->CheckIntegrity().ok()) << f.kv->CheckIntegrity().ToString();
}

TEST(KvCacheDiskFaultTest, BlockDeletedUnderTheProcessIsAMiss) {
  DiskFaultFixture f;
  std::filesystem::remove(f.PathOf(0));
  EXPECT_EQ(f.Rerun(10), 0);
  EXPECT_EQ(f.eng->bad(), 0);
  EXPECT_GE(f.kv->counters().disk.errors, 1);
  EXPECT_TRUE(f.kv->CheckIntegrity().ok()) << f.kv->CheckIntegrity().ToString();
}

TEST(KvCacheDiskFaultTest, UnwritableDirectoryStopsWritesAndServingGoesOn) {
  TempDir dir;
  auto kv = Make(Tiered(8, 4, dir.path(), 1000));
  std::filesystem::remove_all(dir.path() + "/tmp");
  std::ofstream(dir.path() + "/tmp") << "blocks the temporary files";
  FakeEngine eng(*kv, kModel);
  for (int i = 0; i < 5; ++i) {
    std::vector<int32_t> p = Message(50 + i, 0, 29);
    eng.Turn(i + 1, &p, 2);
    EXPECT_TRUE(kv->CheckIntegrity().ok()) << kv->CheckIntegrity().ToString();
  }
  auto c = kv->counters();
  EXPECT_TRUE(c.disk_writes_disabled);
  EXPECT_EQ(c.disk.used_blocks, 0);
  EXPECT_EQ(eng.bad(), 0);
  // Device and host reuse still work.
  std::vector<int32_t> p = Message(54, 0, 29);
  EXPECT_GT(eng.Turn(20, &p, 0).total(), 0);
}

TEST(KvCacheDiskFaultTest, TinyDiskCapEvictsAndStaysUnderCap) {
  TempDir dir;
  auto kv = Make(Tiered(8, 4, dir.path(), 3));
  FakeEngine eng(*kv, kModel);
  std::vector<std::vector<int32_t>> convs;
  for (int i = 0; i < 6; ++i) {
    convs.push_back(Message(60 + i, 0, 21));
    eng.Turn(i + 1, &convs.back(), 0);
    EXPECT_LE(kv->counters().disk.used_blocks, 3);
  }
  EXPECT_GT(kv->counters().disk.evictions, 0);
  size_t files = 0;
  for (auto& e : std::filesystem::recursive_directory_iterator(dir.path())) files += e.path().extension() == ".kvb";
  EXPECT_LE(files, 3u);
  for (int i = 0; i < 6; ++i) eng.Turn(10 + i, &convs[size_t(i)], 0);
  EXPECT_EQ(eng.bad(), 0);
  EXPECT_TRUE(kv->CheckIntegrity().ok()) << kv->CheckIntegrity().ToString();
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
    EXPECT_EQ(cnt.device.evictions, 0);
    if (wp == WritePolicy::kWriteThrough) {
      EXPECT_EQ(cnt.host.cached_blocks, 5);
    } else {
      EXPECT_EQ(cnt.host.cached_blocks, 0);
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
  kv->Hint("agent-1", 30);
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

}  // namespace
}  // namespace pg
