#include "kv/accounting/session_usage.h"

#include <gtest/gtest.h>

#include <vector>

namespace pg {
namespace {

// An index with `n` one-block chains; block i belongs to session owner[i].
struct Blocks {
  PrefixIndex idx;
  SessionUsage usage;
  std::vector<uint32_t> ids;

  explicit Blocks(const std::vector<int32_t>& owner) {
    usage.SetCapacity(kDeviceTier, 12);
    usage.SetCapacity(kHostTier, 0);
    for (size_t i = 0; i < owner.size(); ++i) {
      const std::vector<int32_t> tokens = {int32_t(i), 1, 2, 3};
      const BlockHash root = RootHash("m", "");
      const uint32_t id = idx.Insert(ChainHash(root, tokens), root, 0, tokens);
      IndexEntry& e = idx.at(id);
      e.copy(kDeviceTier) = TierCopy{int32_t(i), true};
      e.session = owner[i];
      usage.Update(id, e);
      ids.push_back(id);
    }
  }
};

TEST(SessionUsageTest, CountsFollowCopiesAndSessions) {
  Blocks b({0, 0, 0, 1, -1});
  EXPECT_EQ(b.usage.blocks(0, kDeviceTier), 3);
  EXPECT_EQ(b.usage.blocks(1, kDeviceTier), 1);
  EXPECT_EQ(b.usage.blocks(-1, kDeviceTier), 0);
  EXPECT_EQ(b.usage.active_sessions(kDeviceTier), 2);
  EXPECT_TRUE(b.usage.CheckIntegrity(b.idx).ok());

  IndexEntry& e = b.idx.at(b.ids[0]);
  e.session = 1;  // used last by session id 1 now
  e.copy(kHostTier) = TierCopy{0, false};
  b.usage.Update(b.ids[0], e);
  EXPECT_EQ(b.usage.blocks(0, kDeviceTier), 2);
  EXPECT_EQ(b.usage.blocks(1, kDeviceTier), 2);
  EXPECT_EQ(b.usage.blocks(1, kHostTier), 1);  // a copy in flight counts
  e.copy(kDeviceTier) = TierCopy{};
  b.usage.Update(b.ids[0], e);
  EXPECT_EQ(b.usage.blocks(1, kDeviceTier), 1);
  EXPECT_TRUE(b.usage.CheckIntegrity(b.idx).ok());

  e.session = 0;  // changed without an Update: the recount disagrees
  EXPECT_FALSE(b.usage.CheckIntegrity(b.idx).ok());
}

TEST(SessionUsageTest, FairShareAndTheHeaviestSession) {
  Blocks b({0, 0, 0, 0, 0, 0, 0, 1, 2});  // capacity 12, three sessions: fair share 4
  EXPECT_EQ(b.usage.fair_share(kDeviceTier), 4);
  EXPECT_EQ(b.usage.Heaviest(kDeviceTier), 0);
  Blocks even({0, 0, 1, 1, 2, 2});
  EXPECT_EQ(even.usage.Heaviest(kDeviceTier), -1);  // nobody above 4
  Blocks alone({3, 3, 3});
  EXPECT_EQ(alone.usage.fair_share(kDeviceTier), 12);  // one session may use the whole tier
  EXPECT_EQ(alone.usage.Heaviest(kDeviceTier), -1);
}

}  // namespace
}  // namespace pg
