// KvCacheManager against damaged, missing and unwritable disk block files,
// and a disk cap too small for the working set.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "kv/kv_cache_manager.h"
#include "kv/kv_test_util.h"
#include "kv/media/disk_tier.h"

namespace pg {
namespace {

using kvtest::FakeEngine;
using kvtest::kBlock;
using kvtest::kModel;
using kvtest::Make;
using kvtest::Message;
using kvtest::SmallLayout;
using kvtest::TempDir;
using kvtest::Tiered;

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
  EXPECT_GE(c.tiers[kDiskTier].errors, 1);
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
  EXPECT_GE(f.kv->counters().tiers[kDiskTier].errors, 1);
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
  EXPECT_EQ(c.tiers[kDiskTier].used_blocks, 0);
  EXPECT_EQ(eng.bad(), 0);
  // Device and host reuse still work.
  std::vector<int32_t> p = Message(54, 0, 29);
  EXPECT_GT(eng.Turn(20, &p, 0).total(), 0);
}

TEST(KvCacheDiskFaultTest, TinyDiskCapEvictsAndStaysUnderCap) {
  TempDir dir;
  auto kv = Make(Tiered(8, 4, dir.path(), 3));
  FakeEngine eng(*kv, kModel);
  auto convs =
      kvtest::OpenConversations(eng, 6, 60, 21, 0, [&] { EXPECT_LE(kv->counters().tiers[kDiskTier].used_blocks, 3); });
  EXPECT_GT(kv->counters().tiers[kDiskTier].evictions, 0);
  size_t files = 0;
  for (auto& e : std::filesystem::recursive_directory_iterator(dir.path())) files += e.path().extension() == ".kvb";
  EXPECT_LE(files, 3u);
  for (int i = 0; i < 6; ++i) eng.Turn(10 + i, &convs[size_t(i)], 0);
  EXPECT_EQ(eng.bad(), 0);
  EXPECT_TRUE(kv->CheckIntegrity().ok()) << kv->CheckIntegrity().ToString();
}

}  // namespace
}  // namespace pg
