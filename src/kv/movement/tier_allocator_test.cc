#include "kv/movement/tier_allocator.h"

#include <gtest/gtest.h>

#include <vector>

#include "kv/kv_test_util.h"

namespace pg {
namespace {

using kvtest::kBlock;
using kvtest::kModel;

// Store, mover and allocator over 2 device slots, 2 host slots and a disk
// of 2 block files; Publish() commits blocks of one chain to the device.
struct AllocFixture {
  kvtest::TempDir dir;
  TierStore store;
  double now = 0;
  SessionRetention retention{[this] { return now; }, 60};
  LruEviction lru;
  std::unique_ptr<TierMover> mover;
  std::unique_ptr<TierAllocator> alloc;
  BlockHash last = RootHash(kModel, "");
  uint64_t tick = 0;

  explicit AllocFixture(WritePolicy wp) {
    EXPECT_TRUE(store.Open(kvtest::Tiered(2, 2, dir.path(), 2)).ok());
    mover = std::make_unique<TierMover>(store, 1);
    alloc = std::make_unique<TierAllocator>(store, *mover, lru, retention, wp);
  }
  uint32_t Publish() {
    const int32_t slot = alloc->AllocDeviceSlot();
    EXPECT_GE(slot, 0);
    const int32_t d = int32_t(tick);
    const std::vector<int32_t> tokens = {d, d, d, d};
    const BlockHash h = ChainHash(last, tokens);
    const uint32_t id = store.index().Insert(h, last, d, tokens);
    kvtest::FillPattern(h, store.device().KernelPtr(slot), kBlock);
    IndexEntry& e = store.index().at(id);
    e.copy(kDeviceTier) = TierCopy{slot, true};
    e.last_tick = ++tick;
    store.device().SetOwner(slot, id);
    store.Unref(kDeviceTier, slot);
    last = h;
    return id;
  }
  Status Integrity() {
    std::vector<int32_t> dev(2, 0), host(2, 0);
    mover->CountPins(dev, host);
    return store.CheckIntegrity(dev, host, 0);
  }
};

TEST(TierAllocatorTest, FullDeviceDemotesTheVictimToHost) {
  AllocFixture f(WritePolicy::kWriteBack);
  const uint32_t a = f.Publish();
  f.Publish();
  EXPECT_TRUE(f.alloc->CanAllocateDevice(2));
  const int32_t slot = f.alloc->AllocDeviceSlot();  // evicts a (the oldest) after copying it to host
  ASSERT_GE(slot, 0);
  const IndexEntry& e = f.store.index().at(a);
  EXPECT_EQ(e.copy(kDeviceTier).slot, -1);
  ASSERT_TRUE(e.copy(kHostTier).usable());
  EXPECT_TRUE(kvtest::HasPattern(e.hash, f.store.host().KernelPtr(e.copy(kHostTier).slot), kBlock));
  EXPECT_EQ(f.store.counters().tiers[kDeviceTier].evictions, 1);
  f.store.Unref(kDeviceTier, slot);
  EXPECT_TRUE(f.Integrity().ok()) << f.Integrity().ToString();
}

TEST(TierAllocatorTest, WriteThroughChainsHostCopiesToDisk) {
  AllocFixture f(WritePolicy::kWriteThrough);
  const uint32_t a = f.Publish();
  f.alloc->WriteThrough(a);
  f.alloc->WaitAll();
  const IndexEntry& e = f.store.index().at(a);
  EXPECT_TRUE(e.copy(kHostTier).usable());
  EXPECT_TRUE(e.copy(kDiskTier).usable());  // the host copy's landing started the file write
  EXPECT_TRUE(f.Integrity().ok()) << f.Integrity().ToString();
}

TEST(TierAllocatorTest, DiskCapEvictsFilesAndFlushWritesTheRest) {
  AllocFixture f(WritePolicy::kWriteBack);
  std::vector<uint32_t> ids;
  for (int i = 0; i < 2; ++i) ids.push_back(f.Publish());
  ASSERT_TRUE(f.alloc->Flush().ok());
  EXPECT_EQ(f.store.disk_used(), 2);
  f.Publish();  // evicts the oldest device block (to host)
  f.Publish();
  ASSERT_TRUE(f.alloc->Flush().ok());
  EXPECT_EQ(f.store.disk_used(), 2);  // capped: older files were evicted for the new ones
  EXPECT_GT(f.store.counters().tiers[kDiskTier].evictions, 0);
  EXPECT_TRUE(f.Integrity().ok()) << f.Integrity().ToString();
}

}  // namespace
}  // namespace pg
