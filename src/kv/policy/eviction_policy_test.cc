#include "kv/policy/eviction_policy.h"

#include <gtest/gtest.h>

#include <memory>
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
      e.copy(kDeviceTier) = TierCopy{b, true};
      e.last_tick = b == 0 ? 1 : 2;
      e.last_use_s = now;
      e.uses = 1;
      idx.Refresh(id, 1u << kDeviceTier);
      ids.push_back(id);
      h = nh;
    }
  }
  EvictionContext ctx(bool host, bool disk) {
    return EvictionContext{idx, retention, 4, TierTable::Of({true, host, disk})};
  }
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
  c.now += 11;                                                                   // the hint expired
  c.idx.at(c.ids[2]).session = -1;
  EXPECT_EQ(lru.PickVictim(kDeviceTier, false, c.ctx(false, false)), c.ids[0]);
}

TEST(EvictionPolicyTest, NeedCleanSkipsBlocksWithoutALowerCopy) {
  Chain c;
  LruEviction lru;
  // With a host tier every device block lacks its host copy: all dirty.
  EXPECT_EQ(lru.PickVictim(kDeviceTier, true, c.ctx(true, false)), PrefixIndex::kNone);
  c.idx.at(c.ids[1]).copy(kHostTier) = TierCopy{0, true};
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

TEST(EvictionPolicyTest, RetainedAndPinnedBlocksNeverLeaveTheHost) {
  Chain c;
  for (uint32_t id : c.ids) {
    IndexEntry& e = c.idx.at(id);
    e.copy(kHostTier) = TierCopy{int32_t(id), true};
    c.idx.Refresh(id, (1u << kDeviceTier) | (1u << kHostTier));
  }
  c.retention.SetBudget(BlockHold::kPinned, 8);
  ASSERT_TRUE(c.retention.HoldBlock(c.idx.at(c.ids[0]).hash, BlockHold::kRetained, 10));
  ASSERT_TRUE(c.retention.HoldBlock(c.idx.at(c.ids[2]).hash, BlockHold::kPinned, 10));
  LruEviction lru;
  CostAwareEviction cost;
  for (const EvictionPolicy* p :
       {static_cast<const EvictionPolicy*>(&lru), static_cast<const EvictionPolicy*>(&cost)}) {
    EXPECT_EQ(p->PickVictim(kHostTier, false, c.ctx(true, false)), c.ids[1]) << p->name();
  }
  // The device may demote held blocks, the unheld first, then retained, then pinned.
  EXPECT_EQ(lru.PickVictim(kDeviceTier, false, c.ctx(true, false)), c.ids[1]);
  c.idx.at(c.ids[1]).session = c.retention.Index("s");
  c.retention.Hint("s", 10);
  EXPECT_EQ(lru.PickVictim(kDeviceTier, false, c.ctx(true, false)),
            c.ids[1]);  // a session hold ranks below block holds
  ASSERT_TRUE(c.retention.HoldBlock(c.idx.at(c.ids[1]).hash, BlockHold::kPinned, 10));
  EXPECT_EQ(lru.PickVictim(kHostTier, false, c.ctx(true, false)), PrefixIndex::kNone);  // all held
  EXPECT_EQ(lru.PickVictim(kDeviceTier, false, c.ctx(true, false)), c.ids[0]);          // retained before pinned
  c.now += 10;                                                                          // every hold expired
  EXPECT_EQ(lru.PickVictim(kHostTier, false, c.ctx(true, false)), c.ids[0]);
}

// A one-block chain of tokens {i, 0, 0, 0}, last used at tick i + 1: its id.
uint32_t InsertChain(PrefixIndex* idx, int i) {
  const std::vector<int32_t> tokens = {i, 0, 0, 0};
  const BlockHash root = RootHash("m", "");
  const uint32_t id = idx->Insert(ChainHash(root, tokens), root, 0, tokens);
  idx->at(id).last_tick = uint64_t(i + 1);
  return id;
}

TEST(EvictionPolicyTest, HeldBlocksDoNotUseUpTheCandidateWindow) {
  // kCandidates + 1 one-block chains in host, oldest first; all but the last retained.
  PrefixIndex idx;
  double now = 0;
  SessionRetention retention{[&] { return now; }, 60};
  std::vector<uint32_t> ids;
  for (int i = 0; i <= EvictionPolicy::kCandidates; ++i) {
    const uint32_t id = InsertChain(&idx, i);
    IndexEntry& e = idx.at(id);
    e.copy(kHostTier) = TierCopy{i, true};
    idx.Refresh(id, 1u << kHostTier);
    if (i < EvictionPolicy::kCandidates) retention.HoldBlock(e.hash, BlockHold::kRetained, 10);
    ids.push_back(id);
  }
  LruEviction lru;
  EXPECT_EQ(lru.PickVictim(kHostTier, false, EvictionContext{idx, retention, 4, TierTable::Of({true, true, false})}),
            ids.back());
}

TEST(EvictionPolicyTest, FairShareTakesTheHeaviestSessionFirst) {
  // Eight one-block chains in the device tier, oldest first: session ids 0, 1,
  // 2 own the three oldest; id 3 the five newest. Capacity 8, four sessions:
  // fair share 2, and id 3 is 3 above it.
  PrefixIndex idx;
  SessionUsage usage;
  usage.SetCapacity(kDeviceTier, 8);
  double now = 0;
  SessionRetention retention{[&] { return now; }, 60};
  std::vector<uint32_t> ids;
  for (int i = 0; i < 8; ++i) {
    const uint32_t id = InsertChain(&idx, i);
    IndexEntry& e = idx.at(id);
    e.copy(kDeviceTier) = TierCopy{i, true};
    e.session = i < 3 ? i : 3;
    idx.Refresh(id, 1u << kDeviceTier);
    usage.Update(id, e);
    ids.push_back(id);
  }
  const EvictionContext ctx{idx, retention, 4, TierTable::Of({true, false, false}), &usage};
  LruEviction lru;
  FairShareEviction fair(std::make_unique<LruEviction>());
  EXPECT_STREQ(fair.name(), "fair");
  EXPECT_EQ(lru.PickVictim(kDeviceTier, false, ctx), ids[0]);   // the oldest: a light session's
  EXPECT_EQ(fair.PickVictim(kDeviceTier, false, ctx), ids[3]);  // the heavy session's oldest
  // Once nobody is above the fair share, it is the inner policy.
  for (int i = 3; i < 6; ++i) {
    idx.at(ids[size_t(i)]).copy(kDeviceTier) = TierCopy{};
    idx.Refresh(ids[size_t(i)], 0);
    usage.Update(ids[size_t(i)], idx.at(ids[size_t(i)]));
  }
  EXPECT_EQ(usage.Heaviest(kDeviceTier), -1);
  EXPECT_EQ(fair.PickVictim(kDeviceTier, false, ctx), ids[0]);
  // Without usage it is the inner policy too.
  EXPECT_EQ(
      fair.PickVictim(kDeviceTier, false, EvictionContext{idx, retention, 4, TierTable::Of({true, false, false})}),
      ids[0]);
}

}  // namespace
}  // namespace pg
