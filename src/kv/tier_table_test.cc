#include "kv/tier_table.h"

#include <gtest/gtest.h>

namespace pg {
namespace {

TEST(TierTableTest, BelowSkipsTheTiersACacheLacks) {
  const TierTable all = TierTable::Of({true, true, true});
  EXPECT_EQ(all.below[kDeviceTier], kHostTier);
  EXPECT_EQ(all.below[kHostTier], kDiskTier);
  EXPECT_EQ(all.below[kDiskTier], kNoTier);

  const TierTable no_host = TierTable::Of({true, false, true});
  EXPECT_EQ(no_host.below[kDeviceTier], kDiskTier);
  EXPECT_EQ(no_host.below[kHostTier], kDiskTier);  // a walk down from a missing tier still ends

  const TierTable device_only = TierTable::Of({true, false, false});
  EXPECT_EQ(device_only.below[kDeviceTier], kNoTier);
  EXPECT_EQ(device_only.write_below(kDeviceTier), kNoTier);
}

TEST(TierTableTest, AnUnwritableTierBelowTakesNoCopy) {
  TierTable t = TierTable::Of({true, false, true});
  EXPECT_EQ(t.write_below(kDeviceTier), kDiskTier);
  t.writable[kDiskTier] = false;  // the disk's writes stopped
  EXPECT_EQ(t.below[kDeviceTier], kDiskTier);
  EXPECT_EQ(t.write_below(kDeviceTier), kNoTier);
}

TEST(TierTableTest, LowestAtOrAboveFallsBackUpTheTable) {
  EXPECT_EQ(TierTable::Of({true, true, true}).lowest(), kDiskTier);
  EXPECT_EQ(TierTable::Of({true, true, false}).lowest(), kHostTier);
  EXPECT_EQ(TierTable::Of({true, false, true}).lowest_at_or_above(kHostTier), kDeviceTier);
  EXPECT_EQ(TierTable::Of({true, false, false}).lowest(), kDeviceTier);
}

}  // namespace
}  // namespace pg
