// TruncateSequence: rolling back a sequence's unverified tail frees only its
// private trailing blocks and never cuts a published one.
#include <gtest/gtest.h>

#include "kv/kv_cache_manager.h"
#include "kv/kv_test_util.h"

namespace pg {
namespace {

using kvtest::kBlock;
using kvtest::kModel;
using kvtest::Make;
using kvtest::Message;
using kvtest::SmallLayout;

TEST(KvCacheTruncateTest, FreesTrailingPrivateBlocksOnly) {
  auto kv = Make(KvCacheConfig::Baseline(SmallLayout(), kModel, 8 * kBlock));
  std::vector<BlockId> table;
  const std::vector<int32_t> p = Message(1, 0, 6);  // page 4: one full block + 2
  ASSERT_TRUE(kv->AllocateSequence(1, kv->Match(p, {}), 6, &table).ok());
  ASSERT_TRUE(kv->PromotionReady(1, &table));
  kv->CommitFullBlock(1, 0, std::span<const int32_t>(p.data(), 4));
  // Speculation grows the sequence by a draft of 7 positions: 13 tokens, 4 blocks.
  ASSERT_TRUE(kv->Append(1, 7, &table).ok());
  EXPECT_EQ(table.size(), 4u);
  EXPECT_FALSE(kv->CanAllocate(5));
  // Two were accepted: 8 tokens, 2 blocks; the other two go back to the pool.
  ASSERT_TRUE(kv->TruncateSequence(1, 8, &table).ok());
  EXPECT_EQ(table.size(), 2u);
  EXPECT_EQ(kv->SequenceTokens(1), 8);
  EXPECT_TRUE(kv->CanAllocate(6));
  EXPECT_TRUE(kv->CheckIntegrity().ok()) << kv->CheckIntegrity().ToString();
  // A published block is never cut, and a sequence never grows by truncation.
  EXPECT_FALSE(kv->TruncateSequence(1, 3, &table).ok());
  EXPECT_FALSE(kv->TruncateSequence(1, 9, &table).ok());
  EXPECT_TRUE(kv->TruncateSequence(1, 4, &table).ok());
  EXPECT_EQ(table.size(), 1u);
  // The published block still serves a lookup.
  std::vector<int32_t> again = Message(1, 0, 6);
  EXPECT_EQ(kv->Match(again, {}).tokens(), 4);
  kv->FreeSequence(1);
  EXPECT_TRUE(kv->CheckIntegrity().ok()) << kv->CheckIntegrity().ToString();
  EXPECT_TRUE(kv->CanAllocate(8));
}

}  // namespace
}  // namespace pg
