#include "kv/media/tier_store.h"

#include <gtest/gtest.h>

#include <vector>

#include "kv/kv_test_util.h"

namespace pg {
namespace {

using kvtest::kBlock;
using kvtest::kModel;
using kvtest::SmallLayout;

TEST(TierStoreTest, ValidateNamesTheFlag) {
  KvCacheConfig c = KvCacheConfig::Baseline(SmallLayout(), kModel, kBlock - 1);
  EXPECT_NE(TierStore::Validate(c).message().find("--kv-device-mem"), std::string::npos);
  c.device_bytes = kBlock;
  c.disk_dir = "/tmp/x";
  EXPECT_NE(TierStore::Validate(c).message().find("--kv-disk-size"), std::string::npos);
  c.disk_dir.clear();
  EXPECT_TRUE(TierStore::Validate(c).ok());
}

TEST(TierStoreTest, DroppingTheLastCopyErasesTheEntry) {
  TierStore s;
  KvCacheConfig c = KvCacheConfig::Baseline(SmallLayout(), kModel, 2 * kBlock);
  c.host_bytes = kBlock;
  ASSERT_TRUE(s.Open(c).ok());
  const std::vector<int32_t> tokens = {1, 2, 3, 4};
  const BlockHash root = RootHash(kModel, "");
  const uint32_t id = s.index().Insert(ChainHash(root, tokens), root, 0, tokens);
  for (int t : {kDeviceTier, kHostTier}) {
    const int32_t slot = s.slots(t).Allocate();
    s.index().at(id).copy(t) = TierCopy{slot, true};
    s.slots(t).SetOwner(slot, id);
    s.Unref(t, slot);  // cached: evictable in both tiers
  }
  EXPECT_EQ(s.index().evictable(kDeviceTier).size(), 1u);
  EXPECT_EQ(s.index().evictable(kHostTier).size(), 1u);
  std::vector<int32_t> dev(2, 0), host(1, 0);
  EXPECT_TRUE(s.CheckIntegrity(dev, host, 0).ok());
  CacheCounters snap = s.Snapshot();
  EXPECT_EQ(snap.tiers[kDeviceTier].cached_blocks, 1);
  EXPECT_EQ(snap.tiers[kHostTier].cached_blocks, 1);
  EXPECT_EQ(snap.index_entries, 1);

  s.DropCopy(id, kDeviceTier);
  EXPECT_EQ(s.index().size(), 1u);  // the host copy keeps it
  EXPECT_EQ(s.device().n_free(), 2);
  s.DropCopy(id, kHostTier);
  EXPECT_EQ(s.index().size(), 0u);
  EXPECT_TRUE(s.CheckIntegrity(dev, host, 0).ok());
}

TEST(TierStoreTest, IntegrityCatchesAWrongLockTotal) {
  TierStore s;
  ASSERT_TRUE(s.Open(KvCacheConfig::Baseline(SmallLayout(), kModel, kBlock)).ok());
  const std::vector<int32_t> tokens = {1, 2, 3, 4};
  const BlockHash root = RootHash(kModel, "");
  const uint32_t id = s.index().Insert(ChainHash(root, tokens), root, 0, tokens);
  s.index().at(id).locks = 1;
  std::vector<int32_t> dev(1, 0), host;
  EXPECT_TRUE(s.CheckIntegrity(dev, host, 1).ok());
  EXPECT_FALSE(s.CheckIntegrity(dev, host, 0).ok());
}

}  // namespace
}  // namespace pg
