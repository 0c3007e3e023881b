#include "kv/movement/tier_mover.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "kv/kv_test_util.h"

namespace pg {
namespace {

using kvtest::kBlock;
using kvtest::kModel;
using kvtest::SmallLayout;

// A store with 3 device and 2 host slots (and a disk tier when dir is set),
// holding one committed block whose device bytes follow its pattern.
struct MoverFixture {
  kvtest::TempDir dir;
  TierStore store;
  uint32_t id = 0;
  BlockHash hash;

  explicit MoverFixture(bool with_disk) {
    KvCacheConfig cfg = with_disk ? kvtest::Tiered(3, 2, dir.path(), 4)
                                  : KvCacheConfig::Baseline(SmallLayout(), kModel, 3 * kBlock);
    if (!with_disk) cfg.host_bytes = 2 * kBlock;
    EXPECT_TRUE(store.Open(cfg).ok());
    const std::vector<int32_t> tokens = {5, 6, 7, 8};
    const BlockHash root = RootHash(kModel, "");
    hash = ChainHash(root, tokens);
    id = store.index().Insert(hash, root, 0, tokens);
    const int32_t slot = store.device().Allocate();
    kvtest::FillPattern(hash, store.device().Ptr(slot), kBlock);
    store.index().at(id).device = SlotCopy{slot, true};
    store.device().SetOwner(slot, id);
    store.Unref(kDeviceTier, slot);  // published and cached
  }
  void Drain(TierMover& mover) {
    while (!mover.empty()) mover.Collect(true, [](const TierMover::Move&) {});
  }
  Status Integrity(const TierMover& mover, std::vector<int32_t> dev, std::vector<int32_t> host, int64_t locks = 0) {
    mover.CountPins(dev, host);
    return store.CheckIntegrity(dev, host, locks);
  }
};

TEST(TierMoverTest, DemotesToHostAndPromotesBackByteForByte) {
  MoverFixture f(false);
  TierMover mover(f.store, 2);
  const IndexEntry& e = f.store.index().at(f.id);
  const uint64_t tag = mover.StartWriteToHost(f.id, f.store.host().Allocate());
  EXPECT_TRUE(mover.in_flight(tag));
  EXPECT_FALSE(e.host.ready);
  EXPECT_TRUE(f.Integrity(mover, {0, 0, 0}, {0, 0}).ok());  // the move's pins are its only holders
  int finished = 0;
  while (!mover.empty()) mover.Collect(true, [&](const TierMover::Move& m) { finished += m.entry == f.id; });
  EXPECT_EQ(finished, 1);
  ASSERT_TRUE(e.host.usable());
  EXPECT_TRUE(kvtest::HasPattern(f.hash, f.store.host().Ptr(e.host.slot), kBlock));
  EXPECT_EQ(f.store.counters().device.demotions, 1);

  // Drop the device copy, then load it back from host into a fresh slot.
  f.store.DropCopy(f.id, kDeviceTier);
  const int32_t slot = f.store.device().Allocate();  // the sequence's reference
  std::memset(f.store.device().Ptr(slot), 0, kBlock);
  mover.StartLoad(f.id, slot);
  f.Drain(mover);
  EXPECT_TRUE(e.device.usable());
  EXPECT_EQ(e.device.slot, slot);
  EXPECT_TRUE(kvtest::HasPattern(f.hash, f.store.device().Ptr(slot), kBlock));
  EXPECT_EQ(f.store.counters().host.promotions, 1);
  std::vector<int32_t> dev(3, 0);
  dev[size_t(slot)] = 1;
  EXPECT_TRUE(f.Integrity(mover, dev, {0, 0}).ok());
}

TEST(TierMoverTest, DiskWriteThenFailedLoadGivesTheSlotBack) {
  MoverFixture f(true);
  TierMover mover(f.store, 1);
  IndexEntry& e = f.store.index().at(f.id);
  mover.StartWriteToDisk(f.id, /*from_host=*/false);
  EXPECT_EQ(f.store.disk_used(), 1);  // counted while in flight
  f.Drain(mover);
  EXPECT_TRUE(e.disk.present);
  EXPECT_TRUE(f.Integrity(mover, {0, 0, 0}, {0, 0}).ok());

  f.store.DropCopy(f.id, kDeviceTier);
  std::filesystem::remove(f.store.disk()->PathFor(f.hash));  // the file vanishes under the cache
  const int32_t slot = f.store.device().Allocate();
  e.locks++;  // as a loading sequence holds it
  mover.StartLoad(f.id, slot);
  f.Drain(mover);
  EXPECT_EQ(e.device.slot, -1);  // the slot is the sequence's private block now
  EXPECT_FALSE(e.disk.present);
  EXPECT_EQ(f.store.counters().disk.errors, 1);
  std::vector<int32_t> dev(3, 0);
  dev[size_t(slot)] = 1;
  EXPECT_TRUE(f.Integrity(mover, dev, {0, 0}, 1).ok());
  EXPECT_EQ(f.store.device().owner(slot), SlotTier::kNoOwner);
}

}  // namespace
}  // namespace pg
