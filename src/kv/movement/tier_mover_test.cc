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
    KvCacheConfig cfg =
        with_disk ? kvtest::Tiered(3, 2, dir.path(), 4) : KvCacheConfig::Baseline(SmallLayout(), kModel, 3 * kBlock);
    if (!with_disk) cfg.host_bytes = 2 * kBlock;
    EXPECT_TRUE(store.Open(cfg).ok());
    const std::vector<int32_t> tokens = {5, 6, 7, 8};
    const BlockHash root = RootHash(kModel, "");
    hash = ChainHash(root, tokens);
    id = store.index().Insert(hash, root, 0, tokens);
    const int32_t slot = store.device().Allocate();
    kvtest::FillPattern(hash, store.device().KernelPtr(slot), kBlock);
    store.index().at(id).copy(kDeviceTier) = TierCopy{slot, true};
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
  const int32_t hs = f.store.host().Allocate();
  const uint64_t tag = mover.Start(f.id, kDeviceTier, kHostTier, hs);
  f.store.Unref(kHostTier, hs);  // the move's pin keeps it
  EXPECT_TRUE(mover.in_flight(tag));
  EXPECT_FALSE(e.copy(kHostTier).ready);
  EXPECT_TRUE(f.Integrity(mover, {0, 0, 0}, {0, 0}).ok());  // the move's pins are its only holders
  int finished = 0;
  while (!mover.empty()) mover.Collect(true, [&](const TierMover::Move& m) { finished += m.entry == f.id; });
  EXPECT_EQ(finished, 1);
  ASSERT_TRUE(e.copy(kHostTier).usable());
  EXPECT_TRUE(kvtest::HasPattern(f.hash, f.store.host().KernelPtr(e.copy(kHostTier).slot), kBlock));
  EXPECT_EQ(f.store.counters().tiers[kDeviceTier].demotions, 1);

  // Drop the device copy, then load it back from host into a fresh slot.
  f.store.DropCopy(f.id, kDeviceTier);
  const int32_t slot = f.store.device().Allocate();  // the sequence's reference
  std::memset(f.store.device().KernelPtr(slot), 0, kBlock);
  mover.Start(f.id, kHostTier, kDeviceTier, slot);
  f.Drain(mover);
  EXPECT_TRUE(e.copy(kDeviceTier).usable());
  EXPECT_EQ(e.copy(kDeviceTier).filled_from, kHostTier);
  EXPECT_EQ(e.copy(kDeviceTier).slot, slot);
  EXPECT_TRUE(kvtest::HasPattern(f.hash, f.store.device().KernelPtr(slot), kBlock));
  EXPECT_EQ(f.store.counters().tiers[kHostTier].promotions, 1);
  std::vector<int32_t> dev(3, 0);
  dev[size_t(slot)] = 1;
  EXPECT_TRUE(f.Integrity(mover, dev, {0, 0}).ok());
}

TEST(TierMoverTest, DiskWriteThenFailedLoadGivesTheSlotBack) {
  MoverFixture f(true);
  TierMover mover(f.store, 1);
  IndexEntry& e = f.store.index().at(f.id);
  mover.Start(f.id, kDeviceTier, kDiskTier);
  EXPECT_EQ(f.store.disk_used(), 1);  // counted while in flight
  f.Drain(mover);
  EXPECT_TRUE(e.copy(kDiskTier).usable());
  EXPECT_TRUE(f.Integrity(mover, {0, 0, 0}, {0, 0}).ok());

  f.store.DropCopy(f.id, kDeviceTier);
  std::filesystem::remove(f.store.disk()->PathFor(f.hash));  // the file vanishes under the cache
  const int32_t slot = f.store.device().Allocate();
  e.locks++;  // as a loading sequence holds it
  mover.Start(f.id, kDiskTier, kDeviceTier, slot);
  f.Drain(mover);
  EXPECT_EQ(e.copy(kDeviceTier).slot, -1);  // the slot is the sequence's private block now
  EXPECT_FALSE(e.copy(kDiskTier).usable());
  EXPECT_EQ(f.store.counters().tiers[kDiskTier].errors, 1);
  std::vector<int32_t> dev(3, 0);
  dev[size_t(slot)] = 1;
  EXPECT_TRUE(f.Integrity(mover, dev, {0, 0}, 1).ok());
  EXPECT_EQ(f.store.device().owner(slot), SlotTier::kNoOwner);
}

// A block found in Redis comes in by the road a disk load takes: staged in
// the remote medium, copied by the mover into a device slot, ready (and
// counted as device bytes in) when collected. No Redis is needed: the remote
// tier connects lazily and Read only hands over staged bytes.
TEST(TierMoverTest, RemoteImportIsAMoveLikeALoad) {
  KvCacheConfig cfg = KvCacheConfig::Baseline(SmallLayout(), kModel, 3 * kBlock);
  cfg.remote.url = "redis://127.0.0.1:1";
  TierStore store;
  ASSERT_TRUE(store.Open(cfg).ok());
  ASSERT_NE(store.remote(), nullptr);
  TierMover mover(store, 1);
  const std::vector<int32_t> tokens = {5, 6, 7, 8};
  const BlockHash root = RootHash(kModel, "");
  const BlockHash h = ChainHash(root, tokens);
  std::vector<uint8_t> bytes(kBlock);
  kvtest::FillPattern(h, bytes.data(), kBlock);
  const uint32_t id = store.Publish(h, root, 0, tokens);
  store.remote()->Stage(h, bytes);
  const int32_t slot = store.device().Allocate();
  mover.Start(id, kRemoteTier, kDeviceTier, slot);
  store.Unref(kDeviceTier, slot);  // the move's pin keeps it
  while (!mover.empty()) mover.Collect(true, [](const TierMover::Move&) {});
  const IndexEntry& e = store.index().at(id);
  ASSERT_TRUE(e.copy(kDeviceTier).usable());
  EXPECT_EQ(e.copy(kDeviceTier).filled_from, kRemoteTier);
  std::vector<uint8_t> back(kBlock);
  ASSERT_TRUE(store.device().Read(BlockRef{e.copy(kDeviceTier).slot}, back.data()).ok());
  EXPECT_TRUE(kvtest::HasPattern(h, back.data(), kBlock));
  EXPECT_EQ(store.counters().tiers[kDeviceTier].bytes_in, int64_t(kBlock));
  EXPECT_TRUE(store.CheckIntegrity(std::vector<int32_t>(3, 0), {}, 0).ok());

  // Nothing staged: the copy fails and the slot is freed, the entry erased.
  const BlockHash h2 = ChainHash(h, tokens);
  const uint32_t id2 = store.Publish(h2, h, 1, tokens);
  const int32_t slot2 = store.device().Allocate();
  mover.Start(id2, kRemoteTier, kDeviceTier, slot2);
  store.Unref(kDeviceTier, slot2);
  while (!mover.empty()) mover.Collect(true, [](const TierMover::Move&) {});
  EXPECT_EQ(store.index().Find(h2), PrefixIndex::kNone);
  EXPECT_EQ(store.device().n_free(), 2);
}

}  // namespace
}  // namespace pg
