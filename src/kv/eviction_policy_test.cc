#include "kv/eviction_policy.h"

#include <gtest/gtest.h>

#include <vector>

namespace pg {
namespace {

// A 3-block conversation whose device copies are all evictable; block 0 is
// the oldest use, blocks 1 and 2 share a newer one.
struct Chain {
  PrefixIndex idx;
  std::vector<uint32_t> ids;
  double now = 1000;
  SessionRetention retention{[this] { return now; }, 60};

  Chain() {
    BlockHash h = RootHash("m", "");
    for (int32_t b = 0; b < 3; ++b) {
      const std::vector<int32_t> tokens = {b, b, b, b};
      const BlockHash nh = ChainHash(h, tokens);
      const uint32_t id = idx.Insert(nh, h, b, tokens);
      IndexEntry& e = idx.at(id);
      e.device = SlotCopy{b, true};
      e.last_tick = b == 0 ? 1 : 2;
      e.last_use_s = now;
      e.uses = 1;
      idx.Refresh(id, 1u << kDeviceTier);
      ids.push_back(id);
      h = nh;
    }
  }
  EvictionContext ctx(bool host, bool disk) { return EvictionContext{idx, retention, 4, host, disk}; }
};

TEST(EvictionPolicyTest, LruTakesTheOldestCostAwareTakesTheTail) {
  Chain c;
  LruEviction lru;
  CostAwareEviction cost;
  EXPECT_EQ(lru.PickVictim(kDeviceTier, false, c.ctx(false, false)), c.ids[0]);  // the head: oldest use
  // Without lower tiers every block is lost; blocks 0 and 1 have children.
  EXPECT_EQ(cost.PickVictim(kDeviceTier, false, c.ctx(false, false)), c.ids[2]);
  EXPECT_STREQ(lru.name(), "lru");
  EXPECT_STREQ(cost.name(), "cost");
}

TEST(EvictionPolicyTest, RetainedSessionsGoLast) {
  Chain c;
  const int32_t s = c.retention.Index("agent");
  c.idx.at(c.ids[0]).session = s;
  c.retention.Hint("agent", 10);
  LruEviction lru;
  EXPECT_EQ(lru.PickVictim(kDeviceTier, false, c.ctx(false, false)), c.ids[2]);  // next oldest: deepest first
  for (uint32_t id : c.ids) c.idx.at(id).session = s;
  EXPECT_EQ(lru.PickVictim(kDeviceTier, false, c.ctx(false, false)), c.ids[0]);  // nothing else left
  c.now += 11;  // the hint expired
  c.idx.at(c.ids[2]).session = -1;
  EXPECT_EQ(lru.PickVictim(kDeviceTier, false, c.ctx(false, false)), c.ids[0]);
}

TEST(EvictionPolicyTest, NeedCleanSkipsBlocksWithoutALowerCopy) {
  Chain c;
  LruEviction lru;
  // With a host tier every device block lacks its host copy: all dirty.
  EXPECT_EQ(lru.PickVictim(kDeviceTier, true, c.ctx(true, false)), PrefixIndex::kNone);
  c.idx.at(c.ids[1]).host = SlotCopy{0, true};
  EXPECT_EQ(lru.PickVictim(kDeviceTier, true, c.ctx(true, false)), c.ids[1]);
  EXPECT_EQ(lru.PickVictim(kHostTier, false, c.ctx(true, false)), PrefixIndex::kNone);  // none evictable there
}

TEST(EvictionPolicyTest, CostModelReloadsFromTheNextCopy) {
  Chain c;
  IndexEntry& e = c.idx.at(c.ids[1]);
  const double page = 4;
  EXPECT_LT(CostAwareEviction::ReloadAfterEviction(e, kDeviceTier, c.ctx(false, false)), 0);  // lost
  EXPECT_DOUBLE_EQ(CostAwareEviction::ReloadAfterEviction(e, kDeviceTier, c.ctx(true, false)),
                   CostAwareEviction::kHostReloadPerToken * page);
  EXPECT_DOUBLE_EQ(CostAwareEviction::ReloadAfterEviction(e, kDeviceTier, c.ctx(false, true)),
                   CostAwareEviction::kDiskReloadPerToken * page);
  EXPECT_DOUBLE_EQ(CostAwareEviction::ReloadAfterEviction(e, kHostTier, c.ctx(true, true)), 0);  // device copy stays
  // Deeper blocks cost more to recompute.
  EXPECT_LT(CostAwareEviction::RecomputeCost(0, 16), CostAwareEviction::RecomputeCost(200, 16));
  EXPECT_DOUBLE_EQ(CostAwareEviction::RecomputeCost(0, 16), 16 * (1 + 8 / CostAwareEviction::kAttentionTokens));
}

}  // namespace
}  // namespace pg
