#include "kv/media/slot_tier.h"

#include <gtest/gtest.h>

#include <vector>

namespace pg {
namespace {

// One index entry whose device copy is `slot`.
uint32_t EntryAt(PrefixIndex& idx, int32_t slot) {
  const std::vector<int32_t> tokens = {1, 2, 3, 4};
  const BlockHash root = RootHash("m", "");
  const uint32_t id = idx.Insert(ChainHash(root, tokens), root, 0, tokens);
  idx.at(id).copy(kDeviceTier) = TierCopy{slot, true};
  idx.Refresh(id, 0);
  return id;
}

TEST(SlotTierTest, PrivateSlotsFreeOnLastUnrefOwnedSlotsStayCached) {
  auto t = SlotTier::Create(kDeviceTier, 3, 512);
  ASSERT_TRUE(t.ok());
  SlotTier& tier = *t;
  EXPECT_TRUE(tier.enabled());
  EXPECT_EQ(tier.capacity(), 3);
  const int32_t a = tier.Allocate(), b = tier.Allocate();
  EXPECT_EQ(tier.n_free(), 1);
  EXPECT_EQ(tier.Unref(a), SlotTier::kNoOwner);  // private: freed
  EXPECT_EQ(tier.n_free(), 2);

  tier.SetOwner(b, 7);
  tier.Ref(b);
  EXPECT_EQ(tier.Unref(b), SlotTier::kNoOwner);  // still held
  EXPECT_EQ(tier.Unref(b), 7);                   // now cached: the owner is named
  EXPECT_EQ(tier.n_free(), 2);                   // cached, not free
  tier.Disown(b);
  EXPECT_EQ(tier.n_free(), 3);
  EXPECT_EQ(tier.owner(b), SlotTier::kNoOwner);
}

TEST(SlotTierTest, DisownOfAHeldSlotKeepsItForTheHolder) {
  auto t = SlotTier::Create(kHostTier, 2, 512);
  ASSERT_TRUE(t.ok());
  const int32_t s = t->Allocate();
  t->SetOwner(s, 3);
  t->Disown(s);
  EXPECT_EQ(t->n_free(), 1);
  EXPECT_EQ(t->Unref(s), SlotTier::kNoOwner);
  EXPECT_EQ(t->n_free(), 2);
}

TEST(SlotTierTest, IntegrityChecksHoldersOwnersAndLeaks) {
  auto t = SlotTier::Create(kDeviceTier, 2, 512);
  ASSERT_TRUE(t.ok());
  PrefixIndex idx;
  const int32_t s = t->Allocate();  // held once
  std::vector<int32_t> holders = {1, 0};
  EXPECT_TRUE(t->CheckIntegrity(holders, idx).ok());
  holders[0] = 2;
  EXPECT_FALSE(t->CheckIntegrity(holders, idx).ok());  // refcount disagrees
  holders[0] = 0;
  t->Unref(s);  // private: freed
  const int32_t c = t->Allocate();
  t->SetOwner(c, EntryAt(idx, c));
  t->Unref(c);  // cached
  EXPECT_TRUE(t->CheckIntegrity(holders, idx).ok());
  idx.at(0).copy(kDeviceTier).slot = 1;  // the entry no longer points back
  EXPECT_FALSE(t->CheckIntegrity(holders, idx).ok());
  idx.at(0).copy(kDeviceTier).slot = c;
  t->SetOwner(c, 0);
  TierCounters tc;
  t->FillOccupancy(512, &tc);
  EXPECT_EQ(tc.capacity_blocks, 2);
  EXPECT_EQ(tc.used_blocks, 1);
  EXPECT_EQ(tc.cached_blocks, 1);
  EXPECT_EQ(tc.pinned_blocks, 0);
  EXPECT_EQ(tc.capacity_bytes, 1024);
}

TEST(SlotTierTest, EmptyTierIsDisabled) {
  SlotTier none;
  EXPECT_FALSE(none.enabled());
  EXPECT_EQ(none.Allocate(), -1);
  auto zero = SlotTier::Create(kHostTier, 0, 512);
  ASSERT_TRUE(zero.ok());
  EXPECT_FALSE(zero->enabled());
}

}  // namespace
}  // namespace pg
